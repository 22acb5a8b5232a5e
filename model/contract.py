"""The model contract: what every model the app loads is and can do.

    m = model.load("mlm")
    m.name, m.kind, m.capabilities          # "mlm", "encoder", {"trace", "fill_mask"}
    m.trace("The cat sat on the mat.")      # a Trace (numpy), whatever the model
    m.fill_mask("I [MASK] across the river.", k=5)
    m.trace(text, ablate=[(1, 2)])          # layer 1's head 2 knocked out (z = 0 before W_O)
    m.trace(text, ablate_mlp=[0])           # layer 0's MLP knocked out (mlp_out = 0)
    m.trace(text, ablate_neurons=[(0, 7)])  # layer 0's neuron 7 knocked out (mlp_post = 0)
    m.mlp_weights(0)                        # {"w_in", "b_in", "w_out", "b_out"}
    m.logit_lens(text)                      # [L + 1, T, V] log-probs read from the stream
    m.patch(source, target, at=[(0, 3)])    # target's run with source's resid_pre at (0, 3)

Every capability is a method with one signature across models. A model that lacks one
raises `Unsupported` with a message a person can read; pages ask `m.can("fill_mask")` (or the
catalogue, before loading) instead of naming models. No torch here: the app can read the
catalogue before PyTorch is imported.

The options of a forward pass (positions, heads and MLPs knocked out, a patch) are one
frozen `RunOptions` (model/options.py): the public keywords (`positions=`, `ablate=`,
`ablate_mlp=`) make one,
and every capability runs through a method that takes it (`trace_with`, `fill_mask_ids`,
`next_distribution`, `log_probs`), so an experiment is a forward pass like any other.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from model.kinds import CAPABILITIES, DOES, capabilities_of
from model.options import CLEAN, Patch, RunOptions, mlp_stacks
from model.trace import Trace

Candidates = list[tuple[str, float]]  # (token or label, probability), most likely first


class Unsupported(NotImplementedError):
    """A model was asked for something it cannot do (a decoder asked to fill a [MASK])."""


@dataclass(frozen=True)
class Sampling:
    """How the next token is picked: temperature, then top-k, then top-p (nucleus).

    temperature 0 is greedy (always the most likely token); top_k None and top_p None are off.
    Frozen and rounded, so it can key a cache."""

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None

    @classmethod
    def of(
        cls, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
    ) -> Sampling:
        """From loose values (sliders, keyword arguments): top-k 0 and top-p 1 mean off."""
        return cls(
            temperature=round(max(0.0, float(temperature)), 4),
            top_k=int(top_k) if top_k and top_k > 0 else None,
            top_p=round(float(top_p), 4) if top_p is not None and 0 < top_p < 1 else None,
        )


def draw(probs: np.ndarray, seed: int, step: int) -> int:
    """One index drawn from `probs`; the same (seed, step) always draws the same way, so the
    same seed and settings write the same text, all at once or one click at a time."""
    rng = np.random.default_rng([int(seed), int(step)])
    p = np.asarray(probs, dtype=np.float64)
    return int(rng.choice(len(p), p=p / p.sum()))


@dataclass
class Generation:
    """The result of `generate`: a continuation written token by token."""

    prompt: str
    tokens: list[str]  # the new tokens, as displayed
    ids: list[int]  # the new tokens' ids
    probs: list[float]  # the probability each new token had when it was picked
    text: str  # prompt and continuation, decoded


@dataclass
class Translation:
    """The result of `translate`: the target sentence, token by token."""

    source: str
    text: str  # the translation, decoded
    tokens: list[str]  # the target tokens, as displayed ([EOS] excluded)
    probs: list[float]  # the probability of each target token when it was picked
    unknown: list[str] = field(default_factory=list)  # source words that became [UNK]


@dataclass
class Attribution:
    """One score per input token for one output (the log-probability of `token` at
    `position`): gradient x input, or integrated gradients from a zero embedding."""

    scores: np.ndarray  # [T] each token's share of the output (positive: it raises it)
    method: str  # "integrated_gradients" or "gradient_x_input"
    position: int  # where the output is read
    token: int  # whose log-probability it is
    value: float  # the output at the input
    baseline: float  # the output at the baseline (integrated gradients; else nan)
    steps: int = 0  # points on the path (integrated gradients)


ATTRIBUTIONS = ("integrated_gradients", "gradient_x_input")


class Note(str):
    """One of a model's notes: as a str, its English text (saved, compared, joined); shown
    (`str(note)`, an f-string) in the language of the moment, from the template and values
    it was made of. A model is shared by every session, so its notes hold no language."""

    message: str
    values: dict[str, object]

    def __new__(cls, message: str, **values: object) -> Note:
        english = {k: str.__str__(v) if isinstance(v, str) else v for k, v in values.items()}
        note = super().__new__(cls, message.format(**english))  # a Note value: its English
        note.message, note.values = message, values
        return note

    def __str__(self) -> str:
        from i18n import _  # the session's language, read only where a note is shown

        return _(self.message, **self.values)


class Model:
    """A loaded model. Subclasses set `kind` and implement the methods of their capabilities;
    the others raise `Unsupported`. The capabilities of a kind are declared once, in the
    table of kinds (model/kinds.py), so the catalogue knows them without loading weights."""

    name: str  # "mlm", or the folder's name
    kind: str  # one of model.kinds.KINDS
    device: str  # "cpu", "cuda", "cuda:1"
    max_len: int = 0  # the context: the most tokens (or patches) one pass reads
    positional: str = "none"  # how positions enter: "sinusoidal", "learned", "none", "rotary"
    example: Any = "The cat sat on the mat."  # an input `trace` takes (a warm-up, a test)
    notes: tuple[str, ...] = ()  # what a person should know about its trace (shown on pages)

    @property
    def capabilities(self) -> frozenset[str]:
        return capabilities_of(self.kind)

    def can(self, capability: str) -> bool:
        return capability in self.capabilities

    def _unsupported(self, capability: str) -> Unsupported:
        can = ", ".join(DOES[c] for c in CAPABILITIES if c in self.capabilities)
        return Unsupported(
            f"'{self.name}' ({self.kind}) cannot {DOES.get(capability, capability)}; "
            f"it can {can or 'do nothing the app asks'}."
        )

    def trace(
        self, inputs: Any, positions: bool = True, ablate: Iterable | None = None,
        ablate_mlp: Iterable | None = None, ablate_neurons: Iterable | None = None,
    ) -> Trace:  # fmt: skip
        """Everything one forward pass computed, for a text (or an image), as numpy.
        `ablate`: (layer, head) pairs (an encoder-decoder: (stack, layer, head)) whose z is
        zero before W_O; `ablate_mlp`: layers (an encoder-decoder: (stack, layer)) whose
        mlp_out is zero; `ablate_neurons`: (layer, neuron) pairs whose mlp_post is zero
        before W_out; everything after them is recomputed."""
        options = RunOptions(positions=positions, ablate=ablate, ablate_mlp=ablate_mlp,
                             ablate_neurons=ablate_neurons)  # fmt: skip
        return self.trace_with(inputs, options)

    def trace_with(self, inputs: Any, options: RunOptions = CLEAN) -> Trace:
        """`trace` under any options (mean-ablation, a patch); inputs may be token ids."""
        raise self._unsupported("trace")

    def patch(
        self, source: Any, target: Any, at: Iterable, site: str = "resid_pre"
    ) -> Trace:
        """The run of `target` with `source`'s activations at `site` ("resid_pre",
        "attn_out" or "mlp_out") for each (layer, position) of `at`. Both need the same
        number of tokens (a ValueError names both counts)."""
        source = source if isinstance(source, str) else tuple(source)
        return self.trace_with(target, RunOptions(patch=Patch(source, tuple(at), site)))

    def logit_lens(self, inputs: Any, at: Sequence[int] | None = None) -> np.ndarray:
        """[L + 1, T, V] log-probabilities read from the residual stream through the model's
        own output head (its final norm, if any, then the unembedding): the stream entering
        layer 0, then the stream leaving each layer. The last equals log_softmax(logits).
        `at`: only these positions ([L + 1, len(at), V])."""
        raise self._unsupported("read every layer's guess")

    def log_probs(
        self, inputs: Any, runs: Sequence[RunOptions], at: Sequence[int] | None = None
    ) -> np.ndarray:
        """[len(runs), len(at), V] log-probabilities of one input under each of `runs`, in
        batched passes (one experiment a row): the heads' effects at the price of a few passes."""
        raise self._unsupported("run experiments in a batch")

    def attribute(
        self, inputs: Any, position: int, token: int, method: str = "integrated_gradients",
        steps: int = 64,
    ) -> Attribution:  # fmt: skip
        """Each input token's score for the log-probability of `token` at `position`."""
        raise self._unsupported("attribute a prediction to its tokens")

    def heads(self) -> dict[str, tuple[int, int]]:
        """The stacks whose heads can be knocked out, each (layers, heads a layer): {"": (4,
        4)} for one stack; an encoder-decoder's "encoder", "decoder" and "cross"."""
        return {}

    def mlps(self) -> dict[str, int]:
        """The stacks whose MLPs can be knocked out, each with its number of layers: {"": 4}
        for one stack; an encoder-decoder's "encoder" and "decoder"; {} for none."""
        return mlp_stacks(self.heads())

    def fill_mask(
        self, text: str, k: int = 5, ablate: Iterable | None = None,
        ablate_mlp: Iterable | None = None, ablate_neurons: Iterable | None = None,
    ) -> list[Candidates]:  # fmt: skip
        """One ranked (token, probability) list per [MASK] in the text, in order."""
        if not self.can("fill_mask"):
            raise self._unsupported("fill_mask")
        options = RunOptions(ablate=ablate, ablate_mlp=ablate_mlp, ablate_neurons=ablate_neurons)
        return self.fill_mask_ids(self.encode(text).ids, k, options)

    def next_token(
        self,
        text: str,
        k: int = 5,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
        ablate: Iterable | None = None,
        ablate_mlp: Iterable | None = None,
        ablate_neurons: Iterable | None = None,
    ) -> Candidates:
        """The k most likely next tokens after the text, with their (filtered) probabilities:
        the top of `next_distribution`, which is what a decoder implements."""
        if not self.can("next_token"):
            raise self._unsupported("next_token")
        sampling = Sampling.of(temperature, top_k, top_p)
        options = RunOptions(ablate=ablate, ablate_mlp=ablate_mlp, ablate_neurons=ablate_neurons)
        probs = self.next_distribution(self.encode(text).ids, sampling, options)
        top = [int(i) for i in np.argsort(-probs, kind="stable")[:k]]
        names = self.tokens_of(top)
        return [(name, float(probs[i])) for name, i in zip(names, top, strict=True) if probs[i] > 0]

    def generate(
        self,
        prompt: str,
        max_new_tokens: int = 20,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
        seed: int = 0,
        ablate: Iterable | None = None,
        ablate_mlp: Iterable | None = None,
        ablate_neurons: Iterable | None = None,
    ) -> Generation:
        """A continuation sampled token by token from `next_distribution`: step i draws with
        (seed, i), as the causal page does click by click, so the same seed gives the same
        text; stops after the end token."""
        if not self.can("generate"):
            raise self._unsupported("generate")
        sampling = Sampling.of(temperature, top_k, top_p)
        options = RunOptions(ablate=ablate, ablate_mlp=ablate_mlp, ablate_neurons=ablate_neurons)
        ids, eos = list(self.encode(prompt).ids), self.special_ids().get("[EOS]")
        new_ids: list[int] = []
        probs: list[float] = []
        for step in range(max_new_tokens):
            p = self.next_distribution(ids + new_ids, sampling, options)
            pick = draw(p, seed, step)
            new_ids.append(pick)
            probs.append(float(p[pick]))
            if pick == eos:
                break
        return Generation(prompt, self.tokens_of(new_ids), new_ids, probs,
                          self.decode(ids + new_ids))  # fmt: skip

    def translate(
        self, text: str, ablate: Iterable | None = None, ablate_mlp: Iterable | None = None,
        ablate_neurons: Iterable | None = None,
    ) -> Translation:  # fmt: skip
        """The text in the target language, decoded greedily."""
        raise self._unsupported("translate")

    def classify(
        self, image: Any, ablate: Iterable | None = None, ablate_mlp: Iterable | None = None,
        ablate_neurons: Iterable | None = None,
    ) -> Candidates:  # fmt: skip
        """Every class with its probability, most likely first."""
        raise self._unsupported("classify")

    # -- Token-level helpers the pages use beside their capability (text models) ------------

    def trace_ids(
        self, ids: list[int], positions: bool = True, ablate: Iterable | None = None,
        ablate_mlp: Iterable | None = None, ablate_neurons: Iterable | None = None,
    ) -> Trace:  # fmt: skip
        """`trace` for token ids as they are (a sentence with [MASK]s, a prompt plus the
        tokens generated so far)."""
        options = RunOptions(positions=positions, ablate=ablate, ablate_mlp=ablate_mlp,
                             ablate_neurons=ablate_neurons)  # fmt: skip
        return self.trace_with(list(ids), options)

    def fill_mask_ids(
        self, ids: list[int], k: int = 5, options: RunOptions = CLEAN
    ) -> list[Candidates]:
        """`fill_mask` for token ids in which some ids are the [MASK] id."""
        raise self._unsupported("fill_mask")

    def next_distribution(
        self, ids: list[int], sampling: Sampling | None = None, options: RunOptions = CLEAN
    ) -> np.ndarray:
        """[V] probabilities of the token after `ids`, after `sampling`'s filters."""
        raise self._unsupported("next_token")

    def encode(self, text: str) -> Any:
        """The text as this model's tokens (`.ids`, `.tokens`, `.offsets`)."""
        raise self._unsupported("read text")

    def tokens_of(self, ids: list[int]) -> list[str]:
        """Token ids as this model displays them."""
        raise self._unsupported("read text")

    def vocabulary(self) -> list[str]:
        """Every token, by id."""
        raise self._unsupported("list its vocabulary")

    def special_ids(self) -> dict[str, int]:
        """The special tokens' ids, by name ("[MASK]": 4)."""
        raise self._unsupported("list its special tokens")

    def decode(self, ids: list[int]) -> str:
        """Token ids back to text (special tokens dropped)."""
        raise self._unsupported("decode token ids")

    # -- Weights, for the views ------------------------------------------------------------

    def embedding_matrix(self) -> np.ndarray:
        """[V, D] the token embedding table."""
        raise self._unsupported("show its embedding table")

    def nearest_tokens(self, token_id: int, k: int = 8) -> Candidates:
        """The k vocabulary tokens whose embeddings have the highest cosine to this one."""
        raise self._unsupported("find nearest tokens")

    def neighbours(self, token_id: int, k: int = 8) -> tuple[Candidates, np.ndarray]:
        """`nearest_tokens` and their rows of the embedding table [k, D]."""
        near = self.nearest_tokens(token_id, k)
        index = {token: i for i, token in enumerate(self.vocabulary())}
        return near, self.embedding_matrix()[[index[token] for token, _ in near]]

    def attention_weights(self, layer: int) -> dict[str, np.ndarray]:
        """W_Q, W_K, W_V as [H, D, Dh] (biases b_Q, b_K, b_V [H, Dh]); W_O [D, D], b_O [D]."""
        raise self._unsupported("show its attention weights")

    def unembedding(self) -> np.ndarray:
        """[D, V] W_U, the output head's last matrix: logits = h @ W_U + b_U, h what that
        matrix reads (the final hidden state after the final norm and, in BERT's head, its
        transform). Row n of an MLP's w_out through it, w_out[n] @ W_U, is neuron n's direct
        logit effect: what it pushes up and down, the norm in between ignored."""
        raise self._unsupported("show its unembedding")

    def read_out(self, vectors: np.ndarray) -> np.ndarray:
        """[N, V] log-probabilities of N vectors [N, D] read as the logit lens reads the
        stream: through the model's own final norm (if any) and output head. Of the last
        layer's resid_post it gives log_softmax(logits); of one layer's mlp_out, what the
        MLP's output alone says."""
        raise self._unsupported("read its guesses (no output head)")

    def mlp_weights(self, layer: int) -> dict[str, np.ndarray]:
        """A layer's MLP as x @ W + b: "w_in" [D, M], "b_in" [M], "w_out" [M, D], "b_out"
        [D], so that trace.layers[layer].mlp_out == mlp_post @ w_out + b_out (and, with a
        GELU, mlp_post == gelu(X @ w_in + b_in) for the MLP's input X). A gated MLP adds
        "w_gate" and "b_gate" (see the model's own docstring)."""
        raise self._unsupported("show its MLP weights")
