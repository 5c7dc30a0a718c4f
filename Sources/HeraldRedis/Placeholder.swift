// HeraldRedis
