"""Start-up checks of the pipeline configuration: no setting dropped, changed or accepted silently.

The Snakefile runs two calls before any rule is defined, so a bad configuration stops the run
before any job, with every problem at once, each naming the config key path (``nugget_lm.train.lr``)
or the file and line:

1. ``yaml_files.check_config_files([config/config.yaml, *workflow.configfiles])``, before ``configfile:``
   loads the base config; and ``check_yaml_files()`` in the workflow profile
   (``profiles/default/config.yaml``), because Snakemake loads every ``--configfile`` before any
   workflow code and its own messages name neither the file nor the line. Each file is read with
   ``yaml_files.read_config_file`` (a safe loader), which rejects

   - a YAML syntax error (``file:line:column``);
   - a duplicate key in any mapping (``file:line:column``, the key and its first line): YAML keeps
     the last one, so the other setting would be dropped silently;
   - a file whose top level is not a mapping (empty, ``~``, a list, a scalar): the message names
     the file and says a mapping of config keys is expected;
   - a file whose cost has no bound (``file:line:column``, before any node is built): YAML aliases
     repeating more than ``MAX_ALIAS_NODES`` nodes ("billion laughs": it loads in milliseconds as shared
     objects, but every walk of the config expands it), an alias inside its own anchor, collections nested
     deeper than ``MAX_DEPTH`` (libyaml's composer crashes at ~50,000 levels);
   - a path that is not a regular file (a directory, a pipe, a device): named, never opened.

   The profile's check also refuses ``--configfile`` given twice (one line): Snakemake's flag stores, it does
   not append, so only the last flag's files would apply; what it checks is what Snakemake applies.

   Without the workflow profile (``--workflow-profile none``, the Python API) a syntax error or a
   non-mapping ``--configfile`` still stops before any job, but with Snakemake's own message: it
   loads those files before the Snakefile runs.

2. ``check_config(config, schema)`` on the merged config (every file and ``--config key=value``):

   - **Schema, strictly** (``schema.schema_problems``): ``config/schema.yaml`` (read with the same
     duplicate-rejecting loader) with every error listed, each as ``<key path>: <problem>``.
     Stricter than JSON Schema's own types: an ``integer`` key written as a float (``seed: 13.0``,
     which JSON Schema accepts but which formats as ``13.0`` into model folders and seeds) is
     refused anywhere in the config, and a ``number`` must be finite. Every object in the schema
     lists its keys with ``additionalProperties: false`` (tests/test_config_validation.py checks
     this, and that the override blocks ``nugget_analysis.model``, ``.model_by_objective.*``,
     ``nugget_analysis.train`` and ``nugget_lm.train`` list exactly the fields of ``NuggetConfig``
     and ``TrainConfig`` that a config may set). Arrays used as sets have ``uniqueItems``.
   - **NaN and infinity** (``schema.nonfinite_problems``): YAML ``.nan``/``.inf`` anywhere, with its path
     (``minimum``/``maximum`` comparisons are false for NaN, so JSON Schema alone would pass it).
   - **Names that become path components** (``$defs/plain_name`` in the schema: Table 2's rows, the
     SubEncoder's backbones and baseline encoders, the distillation teachers' models, variants and ``teacher``):
     letters, digits, ``_ . -``, starting with a letter, digit or ``_``, at most 64 characters, so never
     ``..``, ``a/b``, ``-x`` or a name with whitespace or a control character (``results/table2/../pi.json``).
   - **Named entries unique** (``schema.duplicate_name_problems``): every list of mappings with a ``name``
     (``table2.rows``, ``nugget_lm.rows``, ``subencoder.model.backbones``,
     ``distill.contextual_teacher.variants``, ...) is looked up by name, so two entries with one
     name would collapse into one; likewise one comparison twice in ``statistics.comparisons``.
   - **Folder-safe ratios** (``cross_checks.ratio_problems``): ``table2.rows[i].ratio``, ``nugget_analysis.ratios`` (NUGGET's r,
     Qin & Van Durme 2023, section 3: k = ceil(n * r)) must print as plain decimal digits that read
     back as the same number: they name model folders (``models/nugget/<objective>_r<ratio>/...``)
     that the training rules parse back (``1e-05`` gives ``mt_r1e-05``, which no rule produces).
   - **Keys consistent with each other** (``cross_checks.consistency_problems``; each message names both paths):
     ``warmup_steps`` <= ``max_steps`` in every training block as the rules merge it (``train``;
     ``train`` + ``nugget_analysis.train``; ``train`` + ``nugget_lm.train``; ``distill.train``;
     ``subencoder.train``); corpus ``dev_size`` < ``max_documents`` and ``min_documents`` <=
     ``max_documents``; ``table2.{pi,rr}.min_queries`` <= ``n_queries``;
     ``distill.data.min_documents`` <= ``max_documents``; ``corpora.*.max_tokens`` <=
     ``nugget.max_source_tokens`` (training documents are built to the former, cut to the latter);
     ``nugget_analysis.{fig5,fig6,probability_gain}.ratio`` one of ``nugget_analysis.ratios`` as
     the folders spell them; ``nugget_lm.rows[i].ratio`` folder-safe, a ``nuggets`` history on
     r > 0 and a ``mean`` one on r = 0 (the AE model it starts from);
     ``probability_gain.documents`` one per ``lengths`` entry,
     ``fig7_length`` one of them; ``nugget_lm.compress_tokens`` >= ``compress_window``;
     ``nugget_ablation.layers["3"]`` = the scorer layer of the model it reuses; every
     ``nugget_ablation.rows[i]`` builds, is the zoo model its variant names (same settings) and NUGGET
     (l = 3) is the zoo's MT r = 0.1 model (``table4_zoo_problems``); the teachers one of
     ``distill.structural_teacher.models`` / ``contextual_teacher.variants``; and every NUGGET
     model config the rules build (Table 2's rows, TSDAE, each ``nugget_analysis`` objective and
     ratio) is built with ``NuggetConfig`` itself, its error reported at the config key that set
     the field (e.g. ``nugget_analysis.model_by_objective.ae.decoder_init``).
   - **Encoder limits** (``encoder_limits.encoder_problems``), from the encoder's own ``config.json``
     (``max_position_embeddings``; the layer count ``encoder_layers`` or ``num_hidden_layers``):
     ``table2.max_tokens`` (null = the encoder's limit) and each NUGGET model's
     ``max_source_tokens`` at most the position limit of the encoder that reads them; its
     ``scorer_layer`` (layer l of section 3.1; 0 = the embeddings), ``frozen_layers`` and
     ``nugget_ablation.layers`` at most the encoder's layer count. An encoder that is not on this
     machine (a hub id at paper scale, not cached) is not fetched: its checks are skipped with a note.

3. **Data it reads can be obtained here** (``sources_check.check_sources``), last, on a valid config: a
   data file the configured scale reads that no data mirror holds, with no upstream URL and that nothing
   here can build (the Debian Reference pairs without ``apt-get`` or placed ``.deb`` files; Zhou et al.'s
   pairs, C-STS) stops the run with one ``MissingSourceError`` naming each file and the two ways to get it
   (a data mirror holding it; the builder's prerequisite). In a Snakemake run that starts no job (``-n``)
   the same message is a warning; outside a Snakemake run the check runs only when asked
   (``sources="stop"``).

No rule file raises a config error (``tests/test_workflow.py`` holds them to that): the checks here run
first and report every problem at once, each naming its key path; among the cross-key checks, Table 4's rows
against the zoo's models (``cross_checks.table4_zoo_problems``).
"""

import os

from multivec.config.cross_checks import consistency_problems, ratio_problems
from multivec.config.dataclass_config import ConfigError
from multivec.config.encoder_limits import encoder_problems
from multivec.config.merged_settings import nugget_config_problems
from multivec.config.schema import (SCHEMA, duplicate_name_problems, nonfinite_problems, schema_problems,
                                    unique_problems)
from multivec.config.sources_check import check_sources


def check_config(config: dict, schema: str | os.PathLike | dict = SCHEMA, sources: str = "auto") -> list[str]:
    """Raise ``ConfigError`` naming every invalid key path of ``config``; return notes on skipped checks.

    Duplicate names always; the schema (strictly) and NaN/infinity; the checks after those assume the
    schema's shape, so they run only when these pass. Then, on a valid config, that the data it reads can be
    obtained here (``sources_check.check_sources`` in mode ``sources``: "auto", "stop" or "off").
    """
    problems = schema_problems(config, schema) + nonfinite_problems(config)
    notes: list[str] = []
    if not problems:
        problems = (ratio_problems(config) + consistency_problems(config) + nugget_config_problems(config)
                    + encoder_problems(config, notes))
    problems = unique_problems(problems + duplicate_name_problems(config))
    if problems:
        raise ConfigError(f"invalid configuration ({len(problems)} problem{'s' if len(problems) > 1 else ''}):\n  "
                          + "\n  ".join(problems))
    check_sources(config, sources)
    return unique_problems(notes)
