; YAML mapping keys, in the tags convention.
(block_mapping_pair key: (_) @name) @definition.key
