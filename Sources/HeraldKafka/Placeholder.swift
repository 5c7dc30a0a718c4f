// HeraldKafka
