"""The options of one forward pass: positions on or off, heads and MLPs knocked out,
activations patched in from another run. One frozen object that every capability and the
Trace carry, so an experiment's trace is a Trace like any other and every cache can key
on it.

    model.RunOptions()                                   # the clean run
    model.RunOptions(positions=False)                    # no positional encoding
    model.RunOptions(ablate=[(1, 2)])                    # layer 1's head 2: z = 0 before W_O
    model.RunOptions(ablate=[(1, 2)], ablation="mean")   # z = its mean over the positions
    model.RunOptions(ablate=[("cross", 0, 3)])           # an encoder-decoder names the stack
    model.RunOptions(ablate_mlp=[2])                     # layer 2's MLP: mlp_out = 0
    model.RunOptions(ablate=[(1, 2)], ablate_mlp=[0, 3]) # heads and MLPs together
    model.RunOptions(ablate_mlp=[("decoder", 1)])        # an encoder-decoder names the stack
    model.RunOptions(ablate_neurons=[(2, 505)])          # layer 2's neuron 505: mlp_post = 0
    model.RunOptions(patch=model.Patch("I swam ...", at=[(0, 11)], site="resid_pre"))

Layers, heads and positions are 0-based. Plain Python: no numpy, no torch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from numbers import Integral  # int and numpy's integers

STACKS = ("encoder", "decoder", "cross")  # an encoder-decoder's three kinds of heads
MLP_STACKS = ("encoder", "decoder")  # ... and its two kinds of MLP (cross-attention has none)
SITES = ("resid_pre", "attn_out", "mlp_out")  # where a patch writes (TransformerLens names)
ABLATIONS = ("zero", "mean")

Head = tuple[str, int, int]  # (stack, layer, head); stack "" for a model with one stack
Mlp = tuple[str, int]  # (stack, layer); stack "" for a model with one stack
Neuron = tuple[int, int]  # (layer, neuron) of a model with one stack


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{what} must be a whole number, not {value!r}")
    if int(value) < 0:
        raise ValueError(f"{what} {int(value)} is out of range: layers, heads and positions "
                         "count from 0")  # fmt: skip
    return int(value)


def heads_of(ablate: Iterable | None) -> tuple[Head, ...]:
    """(layer, head) pairs, or (stack, layer, head) triples, as sorted unique triples."""
    if ablate is None:
        return ()
    if isinstance(ablate, str | bytes):
        raise ValueError(f"ablate must be (layer, head) pairs, not the text {ablate!r}")
    found: set[Head] = set()
    for item in ablate:
        if not isinstance(item, tuple | list) or len(item) not in (2, 3):
            raise ValueError(f"ablate: {item!r} is not a (layer, head) pair")
        stack = "" if len(item) == 2 else item[0]
        if len(item) == 3 and stack not in STACKS:
            raise ValueError(f"ablate: {stack!r} is not a stack; an encoder-decoder's are "
                             f"{', '.join(STACKS)}")  # fmt: skip
        found.add((stack, _int(item[-2], "ablate: a layer"), _int(item[-1], "ablate: a head")))
    return tuple(sorted(found))


def mlps_of(ablate_mlp: Iterable | None) -> tuple[Mlp, ...]:
    """Layers (an encoder-decoder: (stack, layer) pairs) as sorted unique (stack, layer)."""
    if ablate_mlp is None:
        return ()
    if isinstance(ablate_mlp, str | bytes):
        raise ValueError(f"ablate_mlp must be layers, not the text {ablate_mlp!r}")
    if isinstance(ablate_mlp, Integral):
        raise ValueError(f"ablate_mlp must be a list of layers, not one number: [{ablate_mlp!r}]")
    found: set[Mlp] = set()
    for item in ablate_mlp:
        if isinstance(item, tuple | list):
            if len(item) != 2 or item[0] not in MLP_STACKS:
                raise ValueError(f"ablate_mlp: {item!r} is not a layer nor a (stack, layer) "
                                 f"pair with stack one of {', '.join(MLP_STACKS)}")  # fmt: skip
            found.add((item[0], _int(item[1], "ablate_mlp: a layer")))
        else:
            found.add(("", _int(item, "ablate_mlp: a layer")))
    return tuple(sorted(found))


def neurons_of(ablate_neurons: Iterable | None) -> tuple[Neuron, ...]:
    """(layer, neuron) pairs as sorted unique pairs."""
    if ablate_neurons is None:
        return ()
    if isinstance(ablate_neurons, str | bytes | Integral):
        raise ValueError(f"ablate_neurons must be (layer, neuron) pairs, not {ablate_neurons!r}")
    found: set[Neuron] = set()
    for item in ablate_neurons:
        if not isinstance(item, tuple | list) or len(item) != 2:
            raise ValueError(f"ablate_neurons: {item!r} is not a (layer, neuron) pair")
        found.add((_int(item[0], "ablate_neurons: a layer"),
                   _int(item[1], "ablate_neurons: a neuron")))  # fmt: skip
    return tuple(sorted(found))


@dataclass(frozen=True)
class Patch:
    """Activations of another input (`source`) written into this run at `site`, for each
    (layer, position) of `at`: activation patching. The two inputs must have as many tokens."""

    source: str | tuple[int, ...]  # the text (or token ids) whose activations are copied
    at: tuple[tuple[int, int], ...] = ()  # (layer, position) pairs
    site: str = "resid_pre"  # resid_pre (the stream entering the layer), attn_out or mlp_out

    def __post_init__(self) -> None:
        if self.site not in SITES:
            raise ValueError(f"site must be one of {', '.join(SITES)}, not {self.site!r}")
        if not isinstance(self.source, str):
            object.__setattr__(self, "source", tuple(_int(i, "a token id") for i in self.source))
        pairs = set()
        for item in self.at:
            if not isinstance(item, tuple | list) or len(item) != 2:
                raise ValueError(f"at: {item!r} is not a (layer, position) pair")
            pairs.add((_int(item[0], "at: a layer"), _int(item[1], "at: a position")))
        object.__setattr__(self, "at", tuple(sorted(pairs)))


@dataclass(frozen=True)
class RunOptions:
    """How one forward pass runs. Frozen, normalized and hashable: a cache key."""

    positions: bool = True  # False: no positional encoding (zeros, or no rotation)
    ablate: tuple[Head, ...] = ()  # heads whose z is replaced before W_O
    ablation: str = "zero"  # "zero": z = 0; "mean": z = its mean over the sentence's positions
    # (the same for a knocked-out MLP's mlp_out and a knocked-out neuron's mlp_post)
    patch: Patch | None = None  # activations copied in from another input
    ablate_mlp: tuple[Mlp, ...] = ()  # layers whose MLP output (mlp_out) is replaced
    ablate_neurons: tuple[Neuron, ...] = ()  # (layer, neuron): mlp_post replaced before W_out

    def __post_init__(self) -> None:
        if self.ablation not in ABLATIONS:
            raise ValueError(f"ablation must be 'zero' or 'mean', not {self.ablation!r}")
        object.__setattr__(self, "positions", bool(self.positions))
        object.__setattr__(self, "ablate", heads_of(self.ablate))
        object.__setattr__(self, "ablate_mlp", mlps_of(self.ablate_mlp))
        object.__setattr__(self, "ablate_neurons", neurons_of(self.ablate_neurons))
        if self.patch is not None and not isinstance(self.patch, Patch):
            raise ValueError(f"patch must be a model.Patch, not {type(self.patch).__name__}")

    @property
    def clean(self) -> bool:
        """Nothing knocked out and nothing patched in (positions may be off)."""
        return not self.knocks and self.patch is None

    @property
    def knocks(self) -> bool:
        """Some head, MLP or neuron is knocked out."""
        return bool(self.ablate or self.ablate_mlp or self.ablate_neurons)

    def knocked(self, stack: str = "") -> dict[int, tuple[int, ...]]:
        """The heads knocked out in one stack ("" for a model with one), by layer."""
        out: dict[int, tuple[int, ...]] = {}
        for s, layer, head in self.ablate:
            if s == stack:
                out[layer] = (*out.get(layer, ()), head)
        return out

    def knocked_mlps(self, stack: str = "") -> tuple[int, ...]:
        """The layers whose MLP is knocked out in one stack ("" for a model with one)."""
        return tuple(layer for s, layer in self.ablate_mlp if s == stack)

    def knocked_neurons(self) -> dict[int, tuple[int, ...]]:
        """The neurons knocked out, by layer."""
        out: dict[int, tuple[int, ...]] = {}
        for layer, neuron in self.ablate_neurons:
            out[layer] = (*out.get(layer, ()), neuron)
        return out

    def describe(self) -> str:
        """A few words for a caption: "clean", "L2H3, L4H1 knocked out (zero)", "L3 MLP
        knocked out (zero)", "L3 N505 knocked out (zero)"."""
        said = []
        if not self.positions:
            said.append("no positions")
        if self.ablate:
            heads = ", ".join(f"{s + ' ' if s else ''}L{layer + 1}H{head + 1}"
                              for s, layer, head in self.ablate)  # fmt: skip
            said.append(f"{heads} knocked out ({self.ablation})")
        if self.ablate_mlp:
            mlps = ", ".join(f"{s + ' ' if s else ''}L{layer + 1} MLP"
                             for s, layer in self.ablate_mlp)  # fmt: skip
            said.append(f"{mlps} knocked out ({self.ablation})")
        if self.ablate_neurons:
            neurons = ", ".join(f"L{layer + 1} N{n}" for layer, n in self.ablate_neurons)
            said.append(f"{neurons} knocked out ({self.ablation})")
        if self.patch is not None:
            said.append(f"{len(self.patch.at)} {self.patch.site} patched in")
        return "; ".join(said) or "clean"


CLEAN = RunOptions()


def check_heads(
    options: RunOptions, stacks: dict[str, tuple[int, int]], name: str, d_mlp: int | None = None
) -> None:
    """ValueError unless every knocked-out head, MLP and neuron exists: `stacks` maps each
    stack the model has ("" for one stack; "encoder", "decoder", "cross") to its (layers,
    heads). Every stack but "cross" has one MLP a layer (`mlp_stacks`), of `d_mlp` neurons
    (None: single neurons cannot be knocked out)."""
    check_mlps(options, mlp_stacks(stacks), name)
    check_neurons(options, stacks.get("", (0, 0))[0] if d_mlp else 0, d_mlp or 0, name)
    for stack, layer, head in options.ablate:
        if stack not in stacks:
            if "" in stacks:
                raise ValueError(f"'{name}' has one stack: give (layer, head) pairs, not "
                                 f"{(stack, layer, head)!r}")  # fmt: skip
            if not stacks:
                raise ValueError(f"'{name}' has no attention heads to knock out")
            raise ValueError(f"'{name}' is an encoder-decoder: name the stack, "
                             f"(stack, layer, head) with stack one of {', '.join(stacks)}")
        n_layers, n_heads = stacks[stack]
        where = f"'{name}'{' ' + stack if stack else ''}"
        _within("ablate: layer", layer, n_layers, f"{where} has {n_layers} layers")
        _within("ablate: head", head, n_heads, f"{where} has {n_heads} heads a layer")


def _within(what: str, value: int, count: int, has: str) -> None:
    """ValueError unless 0 <= value < count ("ablate: layer 5 is out of range: 'mlm' has 4
    layers (0-3)")."""
    if value >= count:
        raise ValueError(f"{what} {value} is out of range: {has} (0-{count - 1})")


def mlp_stacks(stacks: dict[str, tuple[int, int]]) -> dict[str, int]:
    """The stacks with MLPs ("" for one stack; "encoder", "decoder") and their layers, from
    the stacks of heads (cross-attention shares its layers' MLPs with the decoder)."""
    return {stack: layers for stack, (layers, _) in stacks.items() if stack != "cross"}


def check_mlps(options: RunOptions, stacks: dict[str, int], name: str) -> None:
    """ValueError unless every knocked-out MLP exists: `stacks` maps each stack with MLPs
    ("" for one stack; "encoder", "decoder") to its number of layers."""
    for stack, layer in options.ablate_mlp:
        if stack not in stacks:
            if not stacks:
                raise ValueError(f"'{name}' has no MLPs to knock out")
            if "" in stacks:
                raise ValueError(f"'{name}' has one stack: give layers, not {(stack, layer)!r}")
            raise ValueError(f"'{name}' is an encoder-decoder: name the stack, (stack, layer) "
                             f"with stack one of {', '.join(stacks)}")  # fmt: skip
        n_layers, where = stacks[stack], f"'{name}'{' ' + stack if stack else ''}"
        _within("ablate_mlp: layer", layer, n_layers, f"{where} has {n_layers} layers")


def check_neurons(options: RunOptions, n_layers: int, d_mlp: int, name: str) -> None:
    """ValueError unless every knocked-out (layer, neuron) exists in a model of `n_layers`
    MLPs of `d_mlp` neurons each (0: it cannot knock out single neurons)."""
    if options.ablate_neurons and not (n_layers and d_mlp):
        raise ValueError(f"'{name}' cannot knock out single neurons (ablate_neurons); "
                         "knock out its MLPs (ablate_mlp) instead")  # fmt: skip
    for layer, neuron in options.ablate_neurons:
        _within("ablate_neurons: layer", layer, n_layers, f"'{name}' has {n_layers} layers")
        _within("ablate_neurons: neuron", neuron, d_mlp,
                f"'{name}' has {d_mlp} neurons a layer's MLP")  # fmt: skip


def check_patch(patch: Patch, n_layers: int, n_source: int, n_target: int) -> None:
    """ValueError unless the two inputs have as many tokens and every (layer, position)
    exists."""
    if n_source != n_target:
        raise ValueError(
            f"patching needs two inputs with the same number of tokens: the source has "
            f"{n_source}, the target {n_target}"
        )
    for layer, position in patch.at:
        if layer >= n_layers:
            raise ValueError(f"patch: layer {layer} is out of range (0-{n_layers - 1})")
        if position >= n_target:
            raise ValueError(f"patch: position {position} is out of range (0-{n_target - 1})")
