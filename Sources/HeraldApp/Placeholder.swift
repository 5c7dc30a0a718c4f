// HeraldApp
