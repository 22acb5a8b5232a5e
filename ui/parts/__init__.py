"""Each explorer page's own parts, named by the page that draws them (ui/ itself is the
frame every page shares: sidebar, state, caches, charts, widgets).

    tokens.py         the nearest neighbours (PCA map, table, the measured note)
    positional.py     the word-order demo on an encoder (its caption computed)
    attention/        one head step by step (computation.py), every layer x head (grid.py),
                      following one query (query.py)
    masked.py         the guesses, where the [MASK] looked, how BERT learns: 80/10/10
    causal.py         sampling and click-by-click generation; how GPT learns: shifted targets
    translation.py    the Translation pages (rnn, cross_attention): input, presets, unknown
                      words, the two banks
    vision.py         the ViT page's input: test digits, misclassified ones, a drawing, uploads
    compare.py        compare mode (attention, positional, masked): a second sentence;
                      patching A into B on the masked page
    interventions/    ask the model why (masked, causal, cross_attention, vision, lecture
                      step 8): knock out heads, every layer's guess, attention beside
                      attribution
    learn.py          Watch it learn (and its lecture step): a toy model trained live
"""
