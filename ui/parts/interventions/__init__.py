"""Ask the model why (issue 29): experiments as forward passes, on the masked, causal,
cross-attention and vision pages and in lecture step 7, each drawn only inside its open
tab.

    knockout.py   each head's effect on the shown prediction, heads knocked out together
    reading.py    every layer's guess (the logit lens); attention beside attribution
    mlp.py        inside the MLP: a layer's neurons at a token, what they push, MLPs out
    pages.py      what each page asks: its prediction, its input, what it shows after
Patching sentence A into B lives with compare mode (ui/parts/compare.py).
"""
