# Token pooling helpers (rules/token_pooling.smk): the ratios the Table 2 rows ask for and the folders of
# the pooled encodings.
from multivec.nugget.tables.encoding_folders import TOKEN_POOLING_ENCODINGS

TOKEN_POOLING_RATIOS = sorted({row["ratio"] for row in ROWS.values() if row["kind"] == "token_pooling"})


def token_pooling_dir(ratio, task):
    """The pooled encodings of one ratio on one task."""
    return f"data/encodings/{TOKEN_POOLING_ENCODINGS}/r{ratio}/{task}"
