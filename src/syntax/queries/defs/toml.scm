; TOML tables (`[name]`, `[[name]]`, the whole section) and the keys of their pairs, inline
; tables' included (a dotted key is one name: `a.b`).
(table [(bare_key) (dotted_key) (quoted_key)] @name) @definition.key
(table_array_element [(bare_key) (dotted_key) (quoted_key)] @name) @definition.key
(pair [(bare_key) (dotted_key) (quoted_key)] @name) @definition.key
