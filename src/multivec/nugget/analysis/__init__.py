"""Analyses of trained NUGGET models beyond Table 2 (Qin & Van Durme, ICML 2023, §5).

Modules, each tied to a part of the paper:
- ``reconstruction_bleu``: beam-5 decoding of dev documents from their nuggets and corpus BLEU (§5.1, Fig. 4);
- ``selected_tokens``: which token types the scorer selects, against their share in the text (§5.2, Fig. 5);
- ``highlight``: a document with every token shaded by its score and the nuggets marked (§5.2, Fig. 6);
- ``probability_gain``: what each nugget encodes (§5.3, eq. 9), computed with the model and saved;
- ``gain_tables``: Figs. 7, 8, 11 from the saved gains, with CIs (numpy only: the figure rules load no model);
- ``gain_bins``: the distance bins of Figs. 7 and 8, their per-document measurements and claims.
"""
