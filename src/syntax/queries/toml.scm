; TOML tables (`[name]`, `[[name]]`), in the tags convention.
(table [(bare_key) (dotted_key) (quoted_key)] @name) @definition.key
(table_array_element [(bare_key) (dotted_key) (quoted_key)] @name) @definition.key
