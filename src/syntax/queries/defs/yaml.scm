; YAML mapping keys, block and flow, at any depth (a quoted key keeps its quotes).
(block_mapping_pair
  key: (flow_node [(plain_scalar) (single_quote_scalar) (double_quote_scalar)] @name))
  @definition.key
(flow_pair
  key: (flow_node [(plain_scalar) (single_quote_scalar) (double_quote_scalar)] @name))
  @definition.key
