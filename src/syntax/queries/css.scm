; CSS rules, named by their selectors, in the tags convention.
(rule_set (selectors) @name) @definition.rule
