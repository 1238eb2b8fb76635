; CSS rule sets, named by their selectors as written (`.badge > li`), nested ones (in
; `@media`) included.
(rule_set (selectors) @name) @definition.rule
