"""Each explorer page's own parts, named by the page that draws them (ui/ itself is the
frame every page shares: sidebar, state, caches, charts, widgets).

    tokens.py         the nearest neighbours (PCA map, table, the measured note)
    positional.py     the word-order demo on an encoder (its caption computed)
    attention/        one head step by step (computation.py), every layer x head (grid.py),
                      following one query (query.py)
    masked.py         how BERT learns: the 80/10/10 masking
    causal.py         sampling and click-by-click generation; how GPT learns: shifted targets
    translation.py    the Translation pages (rnn, cross_attention): input, presets, unknown
                      words, the two banks
    vision.py         the ViT page's input: test digits, misclassified ones, a drawing, uploads
    compare.py        compare mode (attention, positional, masked): a second sentence
    learn.py          Watch it learn (and its lecture step): a toy model trained live
"""
