"""The Attention page's own parts: one head computed step by step, every layer x head at
once, and following one query."""
