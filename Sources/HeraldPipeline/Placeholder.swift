// HeraldPipeline
