extension TagExpression {
    /// The expression as set operations for Redis; see `TagSetPlan`.
    public func setPlan() -> TagSetPlan {
        var compiler = TagSetPlanCompiler()
        return compiler.compile(self)
    }
}
