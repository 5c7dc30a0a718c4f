// HeraldBenchmarks
