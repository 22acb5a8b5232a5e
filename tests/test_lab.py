"""The lab of slide 48 (issue 27): the reference against the shipped models, the checker's
battery (every classic mistake named with its hint, the reference passing, its outputs
scaled by 1.01 failing and with 1e-7 noise passing), the command line, the notebook run
end to end both ways with nbclient, and Spot the bug."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import lab
from i18n import _, using
from lab import checks, mistakes, notebook, solutions, spot, student, weights
from lab.__main__ import main as lab_main
from lab.mistakes import EXERCISES, MISTAKES, variant

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "lab" / "transformer_lab.ipynb"
SEEDS = (0, 1)  # the battery's runs are repeatable; the checker's own default is a new seed
FLOAT_OUTPUTS = ("attention", "sinusoidal_encoding", "multi_head_attention", "layer", "encoder")
SENTENCES = ["The cat sat on the mat.", "I swam across the river to get to the other bank."]


def scaled(fn, factor: float = 1.01):
    """fn with every output multiplied by `factor`."""

    def wrong(*args):
        out = fn(*args)
        return tuple(o * factor for o in out) if isinstance(out, tuple) else out * factor

    return wrong


def noisy(fn, size: float = 1e-7):
    """fn with noise of `size` added to every (float) output."""

    def near(*args):
        out = fn(*args)
        outs = out if isinstance(out, tuple) else (out,)
        outs = tuple(o + size * torch.randn(o.shape, dtype=o.dtype) for o in outs)
        return outs if isinstance(out, tuple) else outs[0]

    return near


# --- the reference is the shipped models ----------------------------------------------------


@pytest.mark.parametrize("name", ["mlm", "clm"])
def test_the_shipped_models_are_what_the_lab_builds(name: str) -> None:
    cfg = json.loads((ROOT / "assets" / "models" / name / "config.json").read_text())
    assert (cfg["norm"], cfg["positional"], cfg["tie_embeddings"]) == ("post", "sinusoidal", True)
    assert weights.shipped(name).cfg.d_model == 128


@pytest.mark.parametrize("name", ["mlm", "clm"])
@pytest.mark.parametrize("text", SENTENCES)
def test_the_reference_encoder_gives_the_shipped_logits(name: str, text: str) -> None:
    m = weights.shipped(name)
    t = m.trace(text)
    ids = torch.tensor(t.ids)
    mask = solutions.causal_mask(len(ids)) if m.causal else None
    logits = solutions.encoder(ids, lab.params(name), mask).numpy()
    np.testing.assert_allclose(logits, t.logits, atol=1e-4, rtol=0)
    for i, lay in enumerate(t.layers):
        p, x = lab.params(name, layer=i), torch.from_numpy(lay.resid_pre)
        np.testing.assert_allclose(
            solutions.multi_head_attention(x, p, mask), lay.attn_out, atol=1e-5
        )
        np.testing.assert_allclose(solutions.layer(x, p, mask), lay.resid_post, atol=1e-5)
        out, w = solutions.attention(*(torch.from_numpy(a) for a in (lay.q, lay.k, lay.v)), mask)
        np.testing.assert_allclose(w, lay.attention, atol=1e-6)
        np.testing.assert_allclose(out, lay.z, atol=1e-5)


def test_the_reference_encoding_is_the_shipped_buffer() -> None:
    pe = weights.shipped("clm").module.stack.pos_embed
    assert torch.equal(solutions.sinusoidal_encoding(*pe.shape), pe)


def test_the_reference_generation_is_the_clms_greedy_choice() -> None:
    m = weights.shipped("clm")
    prompt = lab.encode("clm", "the dog")
    ids = solutions.generate(prompt, lab.params("clm"), 6)
    assert ids.dtype == torch.long and torch.equal(ids[: len(prompt)], prompt)
    for j in range(len(prompt), len(ids)):
        logits = m.forward(ids[None, :j])[0][0, -1]
        assert int(logits.argmax()) == int(ids[j])


def test_params_layout_and_fresh_copies() -> None:
    p = lab.params("mlm")
    D, V = 128, 8000
    assert p["embed"].shape == (V, D) and p["unembed_bias"].shape == (V,)
    assert len(p["layers"]) == 4 and p["n_heads"] == 4
    layer0 = p["layers"][0]
    assert set(layer0) == set(lab.params("mlm", layer=0))
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        assert layer0[name].shape == (D, D)
    assert layer0["W_1"].shape == (D, 512) and layer0["W_2"].shape == (512, D)
    linear = weights.shipped("mlm").module.stack.layers[0].self_attn.w_q
    assert torch.equal(layer0["W_Q"], linear.weight.T)  # x @ W_Q + b_Q is the module's w_q(x)
    layer0["W_Q"].zero_()  # a student's in-place change reaches neither the model nor others
    assert torch.equal(lab.params("mlm", layer=0)["W_Q"], linear.weight.T)
    with pytest.raises(IndexError):
        lab.params("mlm", layer=4)
    with pytest.raises(ValueError):
        lab.params("vit")


def test_encode_decode_tokens() -> None:
    ids = lab.encode("mlm", "The cat sat.")
    assert lab.tokens("mlm", ids)[0] == "[BOS]" and lab.tokens("mlm", ids)[-1] == "[EOS]"
    assert lab.decode("clm", lab.encode("clm", "the cat sat")) == "the cat sat"


# --- the battery ------------------------------------------------------------------------------


@pytest.mark.parametrize("exercise", EXERCISES)
def test_the_reference_passes(exercise: str) -> None:
    report = lab.check(exercise, getattr(solutions, exercise))  # a new seed, new sentences
    assert report.passed, report.message
    assert "atol 0.0001, rtol 0.001" in report.message


@pytest.mark.parametrize("exercise", EXERCISES)
def test_outputs_scaled_by_1_01_fail(exercise: str) -> None:
    report = lab.check(exercise, scaled(getattr(solutions, exercise)), seed=SEEDS[0])
    assert report.status == checks.FAILED, report.message
    assert report.message


@pytest.mark.parametrize("exercise", FLOAT_OUTPUTS)
def test_outputs_with_1e_7_noise_pass(exercise: str) -> None:
    report = lab.check(exercise, noisy(getattr(solutions, exercise)), seed=SEEDS[0])
    assert report.passed, report.message


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", list(MISTAKES))
def test_each_classic_mistake_is_named_with_its_hint(name: str, seed: int) -> None:
    mistake = MISTAKES[name]
    report = lab.check(mistake.exercise, mistake.fn, seed=seed)
    assert report.status == checks.FAILED
    assert report.mistake == name, report.message
    assert mistake.hint in report.message


@pytest.mark.parametrize(
    ("name", "exercise"),
    [("no_scale", "multi_head_attention"), ("mask_after_softmax", "layer"),
     ("split_without_transpose", "layer"), ("pre_norm", "encoder"),
     ("sin_cos_swapped", "encoder"), ("no_positions", "generate")],
)  # fmt: skip
def test_a_mistake_in_a_part_is_named_in_the_whole(name: str, exercise: str) -> None:
    report = lab.check(exercise, variant(MISTAKES[name], exercise), seed=SEEDS[1])
    assert report.mistake == name, report.message
    assert MISTAKES[name].hint in report.message


def test_the_mask_after_the_softmax_reads_as_the_issue_says() -> None:
    report = lab.check("attention", mistakes.mask_after_softmax, seed=3)
    assert "sums to" in report.message
    assert "the mask must be applied before the softmax" in report.message


def test_a_wrong_base_is_fitted() -> None:
    report = lab.check("sinusoidal_encoding", lambda T, D: mistakes.with_base(T, D, 500.0), seed=0)
    assert report.mistake == "wrong_base"
    assert "a base of 500" in report.message


def test_float32_arithmetic_passes() -> None:
    def encoding(T: int, D: int) -> torch.Tensor:
        angle = torch.arange(T).float()[:, None] / 10000 ** (torch.arange(0, D, 2).float() / D)
        return torch.stack([angle.sin(), angle.cos()], dim=-1).reshape(T, D)

    assert lab.check("sinusoidal_encoding", encoding).passed


def test_a_large_negative_fill_passes_and_a_multiplied_mask_fails() -> None:
    def attention(q, k, v, mask=None, fill=-1e9):
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, fill) if fill else scores * mask
        weights = scores.softmax(-1)
        return weights @ v, weights

    assert lab.check("attention", attention).passed
    report = lab.check("attention", lambda q, k, v, mask=None: attention(q, k, v, mask, 0), seed=0)
    assert "where the mask is False: masked weights must be 0" in report.message


def test_shapes_dtypes_and_errors_are_said_plainly() -> None:
    only_out = lab.check("attention", lambda q, k, v, mask=None: solutions.attention(q, k, v)[0])
    assert "expected a tuple (out, weights)" in only_out.message

    def no_transpose(q, k, v, mask=None):
        weights = (q @ k).softmax(-1)
        return weights @ v, weights

    raised = lab.check("attention", no_transpose, seed=0)
    assert "it raised RuntimeError" in raised.message
    assert "weights = (q @ k).softmax(-1)" in raised.message  # the student's own line
    assert "S=" in raised.message  # the keys differ from the queries (cross-attention shapes)
    floats = lab.check("causal_mask", lambda T: torch.tril(torch.ones(T, T)))
    assert "expected torch.bool" in floats.message
    wide = lab.check(
        "sinusoidal_encoding", lambda T, D: solutions.sinusoidal_encoding(T, D).double()
    )
    assert "float64, expected torch.float32" in wide.message
    new_only = lab.check(
        "generate", lambda p, params, n: solutions.generate(p, params, n)[len(p) :]
    )
    assert "followed by the n new ones" in new_only.message
    as_list = lab.check("generate", lambda p, params, n: solutions.generate(p, params, n).tolist())
    assert "not a torch tensor" in as_list.message


def test_not_written_yet_and_missing() -> None:
    def attention(q, k, v, mask=None):
        raise NotImplementedError

    def multi_head_attention(x, params, mask=None):
        return attention(x, x, x, mask)[0]

    assert lab.check("attention", attention).status == checks.NOT_WRITTEN
    inner = lab.check("multi_head_attention", multi_head_attention)
    assert inner.status == checks.NOT_WRITTEN and "write attention first" in inner.message
    assert lab.check("layer", None).status == checks.MISSING
    with pytest.raises(ValueError):
        lab.check("softmax", attention)


def test_each_run_draws_new_inputs_and_a_seed_repeats_one() -> None:
    a, b = (lab.check("encoder", mistakes.no_positions) for _run in range(2))
    assert a.seed != b.seed
    again = lab.check("encoder", mistakes.no_positions, seed=a.seed)
    assert again.message == a.message
    assert f"seed {a.seed}" in str(a)


def test_the_attention_figure_sets_the_students_beside_the_models() -> None:
    report = lab.check("attention", mistakes.no_scale, seed=0)
    fig = report.figure
    assert [t.type for t in fig.data] == ["heatmap", "heatmap"]
    assert [a.text for a in fig.layout.annotations][:2] == ["yours", "the shipped model's"]
    assert not np.allclose(np.asarray(fig.data[0].z, float), np.asarray(fig.data[1].z, float))
    for exercise in ("causal_mask", "sinusoidal_encoding", "layer"):
        wrong = lab.check(exercise, mistakes.mistakes_in(exercise)[0].fn, seed=0)
        assert wrong.figure is not None and len(wrong.figure.data) >= 1


# --- the command line -------------------------------------------------------------------------


def run_lab(*args: str, lang: str = "en") -> SimpleNamespace:
    """`python -m lab ARGS` in this process (lab.__main__.main, its output captured): the
    shipped models are loaded once for every check (test_help runs the real command)."""
    out, err = io.StringIO(), io.StringIO()
    before = os.environ.get("GLASSBOX_LANG")
    os.environ["GLASSBOX_LANG"] = lang  # as the command reads it: outside a Streamlit run
    try:
        with contextlib.chdir(ROOT), redirect_stdout(out), redirect_stderr(err):
            code = lab_main(list(args))
    except SystemExit as stop:  # argparse's --help and usage errors
        code = stop.code
    finally:
        if before is None:
            os.environ.pop("GLASSBOX_LANG")
        else:
            os.environ["GLASSBOX_LANG"] = before
    return SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def run_module(*args: str) -> subprocess.CompletedProcess:
    """The real `python -m lab ARGS`, in a process of its own."""
    return subprocess.run([sys.executable, "-m", "lab", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)  # fmt: skip


def rows(output: str) -> dict[str, str]:
    """exercise -> its status, from the command's table."""
    found = {}
    for line in output.splitlines():
        parts = line.split(maxsplit=1)
        if parts and parts[0] in EXERCISES:
            found[parts[0]] = parts[1].rstrip(":")
    return found


def test_help() -> None:
    run = run_module("--help")
    assert run.returncode == 0 and "usage:" in run.stdout and "check" in run.stdout
    assert run_lab("check", "--help").returncode == 0
    missing = run_module("check", "no/such/file.py")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr, missing.stderr


def test_the_cli_passes_the_solutions_file() -> None:
    run = run_lab("check", "lab/solutions.py")
    assert run.returncode == 0, run.stdout + run.stderr
    assert rows(run.stdout) == dict.fromkeys(EXERCISES, "passed")
    assert "7 of 7 exercises passed" in run.stdout


def test_the_cli_on_the_shipped_notebook_says_not_written_yet() -> None:
    run = run_lab("check", "lab/transformer_lab.ipynb")
    assert run.returncode == 1
    assert rows(run.stdout) == dict.fromkeys(EXERCISES, "not written yet")
    assert "Traceback" not in run.stdout + run.stderr


def test_the_cli_on_the_solved_notebook_passes(tmp_path: Path) -> None:
    solved = notebook.write(tmp_path / "solved.ipynb", solutions=True)
    run = run_lab("check", str(solved))
    assert run.returncode == 0, run.stdout + run.stderr
    assert rows(run.stdout) == dict.fromkeys(EXERCISES, "passed")


def test_the_cli_names_a_mistake_in_a_py_file(tmp_path: Path) -> None:
    source = (ROOT / "lab" / "solutions.py").read_text()
    buggy = source.replace(
        "weights = torch.softmax(scores, dim=-1)", "weights = torch.softmax(scores, dim=-2)"
    )
    assert buggy != source
    (tmp_path / "mine.py").write_text(buggy)
    run = run_lab("check", str(tmp_path / "mine.py"), "--seed", "0")
    assert run.returncode == 1
    table = rows(run.stdout)
    assert table["attention"] == "failed" and table["causal_mask"] == "passed"
    assert "each query's row of weights" in " ".join(run.stdout.split())
    assert run_lab("check", str(tmp_path / "absent.py")).returncode == 2


# --- in Korean (issue 31) ---------------------------------------------------------------------


def _hangul(text: str) -> bool:
    return any("가" <= ch <= "힣" for ch in text)


def test_the_checker_says_a_mistake_in_korean_when_asked() -> None:
    with using("ko"):
        ko = lab.check("attention", mistakes.mask_after_softmax, seed=0)
        shown = str(ko)  # the report as a notebook prints it
    with using("en"):
        en = lab.check("attention", mistakes.mask_after_softmax, seed=0)
    assert ko.mistake == en.mistake == "mask_after_softmax"
    assert "the mask must be applied before the softmax" in en.message
    assert not _hangul(en.message) and not _hangul(str(en))
    assert "마스크는 소프트맥스 전에 적용해야 합니다" in ko.message  # the hint, in Korean
    assert "합이" in ko.message and "실패" in shown  # the fact and the status too
    numbers = re.compile(r"\d+(?:\.\d+)?")
    assert numbers.findall(ko.message) == numbers.findall(en.message)  # the same run, in words


def test_a_passed_report_and_spot_the_bug_speak_korean() -> None:
    with using("ko"):
        passed = lab.check("causal_mask", solutions.causal_mask, seed=0)
        shown = str(passed)
        effects = spot.spot_the_bug("the cat sat on the mat", mistakes=("no_scale",))[0].effects()
    assert passed.passed and "atol 0.0001, rtol 0.001" in passed.message
    assert _hangul(passed.message) and "통과" in shown
    assert effects and all(_hangul(said) for said in effects)


def test_the_cli_speaks_the_language_of_glassbox_lang() -> None:
    run = run_lab("check", "lab/solutions.py", lang="ko")
    assert run.returncode == 0, run.stdout + run.stderr
    assert rows(run.stdout) == dict.fromkeys(EXERCISES, "통과")
    assert "연습 문제 7개 중 7개 통과" in run.stdout


def test_a_notebook_is_read_as_a_kernel_would(tmp_path: Path) -> None:
    nb = notebook.build()
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    code[0]["source"] += ["\n%matplotlib inline\n", "!echo hi\n"]
    code.insert(1, {**code[1], "source": ["undefined_name\n"], "metadata": {}})  # it raises
    nb["cells"] = [c for c in nb["cells"] if c["cell_type"] == "markdown"][:1] + code
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb))
    loaded = student.load(path)
    assert callable(loaded.names["attention"]) and callable(loaded.names["generate"])
    assert any("NameError" in e for e in loaded.errors)
    assert len(student.code_cells(path)) == len(code) - len(EXERCISES) - 1  # no check cells


# --- the notebook -----------------------------------------------------------------------------


def test_the_shipped_notebook_is_the_generated_one() -> None:
    nbformat = pytest.importorskip("nbformat")
    assert NOTEBOOK.read_text(encoding="utf-8") == notebook.text(), "run: python -m lab notebook"
    korean = notebook.NOTEBOOKS["ko"].read_text(encoding="utf-8")
    assert korean == notebook.text(lang="ko"), "run: python -m lab notebook --lang ko"
    nbformat.validate(nbformat.reads(korean, as_version=4))
    nbformat.validate(nbformat.reads(notebook.text(), as_version=4))
    nbformat.validate(nbformat.reads(notebook.text(solutions=True), as_version=4))
    tags = [c["metadata"].get("tags", []) for c in notebook.build()["cells"]]
    assert sum("exercise" in t for t in tags) == len(EXERCISES)
    assert "import lab.solutions" not in NOTEBOOK.read_text() and "solutions" not in notebook.SETUP


EXECUTE = """
import json, sys
import nbclient, nbformat
nb = nbformat.read(sys.argv[1], as_version=4)
nb.cells.append(nbformat.v4.new_code_cell("import sys; print('kernel prefix', sys.prefix)"))
nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                        resources={"metadata": {"path": sys.argv[2]}}).execute()
nbformat.write(nb, sys.argv[3])
"""


def execute(path: Path, out: Path, home: Path) -> list[dict]:
    """Run the notebook with nbclient in a fresh process that has the venv's python but
    not its bin/ on PATH, and no user kernelspecs (an empty HOME); its code cells back."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run(
        [sys.executable, "-c", EXECUTE, str(path), str(ROOT / "lab"), str(out)],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    return [c for c in json.loads(out.read_text())["cells"] if c["cell_type"] == "code"]


def printed(cell: dict) -> str:
    texts = [o.get("text", "") for o in cell["outputs"] if o["output_type"] == "stream"]
    return "".join("".join(t) if isinstance(t, list) else t for t in texts)


def check_cells(cells: list[dict]) -> list[dict]:
    return [c for c in cells if c.get("id", "").endswith("-check")]


def test_the_notebook_as_shipped_runs_and_says_not_written_yet(tmp_path: Path) -> None:
    pytest.importorskip("nbclient")
    cells = execute(NOTEBOOK, tmp_path / "out.ipynb", tmp_path)
    assert not [o for c in cells for o in c["outputs"] if o["output_type"] == "error"]
    assert len(check_cells(cells)) == len(EXERCISES)
    for cell in check_cells(cells):
        assert "not written yet" in printed(cell), cell["source"]
    assert f"kernel prefix {sys.prefix}" in printed(cells[-1])  # the venv's own python


def test_the_korean_notebook_explains_in_korean_and_keeps_the_code() -> None:
    """The same cells: every explanation in Korean, every code cell as in the English one
    but the setup's first lines, which make the checks speak Korean."""
    english, korean = notebook.build()["cells"], notebook.build(lang="ko")["cells"]
    assert [c["id"] for c in english] == [c["id"] for c in korean]
    for en, ko in zip(english, korean, strict=True):
        if en["cell_type"] == "markdown":
            assert re.search("[가-힣]", "".join(ko["source"])) and en["source"] != ko["source"]
        elif en["id"] == "setup":
            assert "".join(ko["source"]).endswith("".join(en["source"]))
            assert 'os.environ["GLASSBOX_LANG"] = "ko"' in "".join(ko["source"])
        else:
            assert en["source"] == ko["source"], en["id"]


def test_the_korean_notebook_as_shipped_says_not_written_yet_in_korean(tmp_path: Path) -> None:
    pytest.importorskip("nbclient")
    cells = execute(notebook.NOTEBOOKS["ko"], tmp_path / "out.ipynb", tmp_path)
    assert not [o for c in cells for o in c["outputs"] if o["output_type"] == "error"]
    with using("ko"):
        missing = _(checks.NOT_WRITTEN)
    assert missing != checks.NOT_WRITTEN
    for cell in check_cells(cells):
        assert missing in printed(cell), printed(cell)


def test_the_notebook_with_the_solutions_passes_every_check(tmp_path: Path) -> None:
    pytest.importorskip("nbclient")
    solved = notebook.write(tmp_path / "solved.ipynb", solutions=True)
    cells = execute(solved, tmp_path / "out.ipynb", tmp_path)
    assert not [o for c in cells for o in c["outputs"] if o["output_type"] == "error"]
    for cell in check_cells(cells):
        assert ": passed:" in printed(cell), printed(cell)
    attention = next(c for c in cells if c.get("id") == "attention-check")
    assert any("application/vnd.plotly.v1+json" in o.get("data", {}) for o in attention["outputs"])
    assert "the clm goes on:" in printed(next(c for c in cells if c.get("id") == "try"))


# --- Spot the bug -----------------------------------------------------------------------------


def test_spot_the_bug_draws_each_mistake_beside_the_model() -> None:
    text = SENTENCES[1]
    found = {s.mistake.name: s for s in lab.spot_the_bug(text, "clm", layer=0)}
    assert set(found) == set(spot.SPOT)
    trace = weights.shipped("clm").trace(text)
    for s in found.values():
        np.testing.assert_allclose(s.reference, trace.layers[0].attention, atol=1e-6)
        assert s.weights.shape == s.reference.shape and s.tokens == trace.tokens
        assert s.changed > 0.01
    assert "saturate" in found["no_scale"].effects()[0]
    assert "no longer sum to 1" in found["mask_after_softmax"].effects()[0]
    assert "no longer sum to 1" in found["wrong_axis"].effects()[0]
    leak = lab.spot_the_bug(text, "clm", 1, ["mask_ignored"])[0]
    assert "the future leaks" in leak.effects()[0]
    encoder = lab.spot_the_bug("I [MASK] across the river.", "mlm", 1, ["no_positions"])[0]
    assert encoder.changed > 0.01 and not encoder.causal


@pytest.mark.parametrize("model_name", ["clm", "mlm"])
def test_a_pass_stopped_at_the_layer_drawn_draws_the_same(model_name: str) -> None:
    """spot_the_bug stops each pass once the layer it draws is recorded (`upto`): that
    layer's attention is the one the whole pass records, for every layer and mistake."""
    m = weights.shipped(model_name)
    ids = torch.tensor(m.encode(SENTENCES[1]).ids)
    for name in [None, *MISTAKES]:
        mistake = None if name is None else MISTAKES[name]
        whole = spot.attention_with(mistake, ids, model_name)
        assert len(whole) == m.cfg.n_layers
        for layer in range(m.cfg.n_layers):
            part = spot.attention_with(mistake, ids, model_name, layer)
            assert len(part) == layer + 1, (name, layer)
            np.testing.assert_array_equal(part[layer], whole[layer], err_msg=f"{name} {layer}")


def test_every_mistake_has_a_one_line_diff_and_runs_in_spot_the_bug() -> None:
    spots = lab.spot_the_bug("the dog bit the man", "clm", 0, list(MISTAKES))
    for s in spots:
        m = s.mistake
        assert "\n" not in m.title + m.hint + m.right + m.wrong and m.right != m.wrong
        assert m.diff == f"- {m.right}\n+ {m.wrong}"
        assert s.effects()


def test_the_mistakes_import_without_streamlit() -> None:
    code = "import sys, lab.mistakes, lab.spot; print('streamlit' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert run.stdout.strip() == "False", run.stderr
