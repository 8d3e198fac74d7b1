"""Baselines for Table 2 that need no training: an untrained encoder's token states or mean."""

from multivec.baselines.base_encoder import (encode_mean_pooled, encode_token_states, load_encoder,
                                            write_baseline_encodings)

__all__ = ["encode_mean_pooled", "encode_token_states", "load_encoder", "write_baseline_encodings"]
