"""The configuration layer: every config error of the project is raised here.

- ``yaml_files``: config files read strictly (syntax, duplicate keys, a mapping at the top, aliases and nesting
  within bounds, a regular file), and the ``--configfile`` arguments of a command line (given once);
- ``schema``: the merged config against ``config/schema.yaml``, strictly, plus NaN/infinity and unique names;
- ``merged_settings``: the model and training settings each rule builds, with the key that set each field;
- ``cross_checks``: keys consistent with each other;
- ``encoder_limits``: lengths and layers within the limits of the encoders that read them;
- ``checks``: ``check_config``, all of the above in order, as the Snakefile runs it;
- ``dataclass_config``: ``ConfigError`` and ``from_dict``, which every config dataclass uses.
"""
