"""Names of the shared encodings folders, ``data/encodings/<name>/...``, that rows read without training a
model of their own. The workflow imports them while it parses, so this module imports nothing heavy."""

BASE_ENCODINGS = "base_encoder"  # the untrained base encoder's token states (ColBART and mean-pooled rows)
TOKEN_POOLING_ENCODINGS = "token_pooling"  # <this>/r<ratio>/<task>: the base states pooled by Ward clustering
