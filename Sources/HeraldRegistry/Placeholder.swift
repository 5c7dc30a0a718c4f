// HeraldRegistry
