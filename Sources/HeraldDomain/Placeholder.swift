// HeraldDomain
