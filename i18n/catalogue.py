"""The catalogues, made with Babel: `python -m i18n.catalogue [--check]`.

    python -m i18n.catalogue          extract, merge the drafts, compile
    python -m i18n.catalogue --check  list the messages the committed Korean lacks (exit 1)

1. Extract every `_()`, `ngettext()` and `N_()` message of the app's source (babel.cfg:
   app.py, ui/, pages/, viz/, lab/, model/, analysis/, i18n/) into `locale/glassbox.pot`.
2. Update `locale/ko/LC_MESSAGES/glassbox.po` from it: its translations are kept, a message
   no longer in the source is dropped, and every translation in `locale/ko/drafts/*.po`
   (what each translator writes) is taken over, also where the .po had one already (a
   draft corrects its own Korean).
3. Compile `glassbox.mo` beside it: the app reads only that, with the stdlib's gettext.

Several translators may run it at once: a file lock (fcntl) lets one merge at a time, and
each file is written whole and then moved into place. Needs Babel (requirements-dev.txt),
which the app at run time does not.
"""

from __future__ import annotations

import argparse
import fcntl
import io
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

from i18n import DOMAIN, LOCALE_DIR

ROOT = LOCALE_DIR.parent
MAPPING = ROOT / "babel.cfg"
TEMPLATE = LOCALE_DIR / f"{DOMAIN}.pot"
LOCK = LOCALE_DIR / ".catalogue.lock"  # git-ignored
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
PROJECT = "Transformer Glassbox"
HEADER = """\
# {what} for Transformer Glassbox: made by `python -m i18n.catalogue`; do not edit it by
# hand (a translator writes locale/<lang>/drafts/<area>.po, docs/ARCHITECTURE.md).
#"""
LANGUAGE = "ko"  # the one translated language today; English is the messages themselves


def po_path(lang: str = LANGUAGE) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def mo_path(lang: str = LANGUAGE) -> Path:
    return po_path(lang).with_suffix(".mo")


def drafts_dir(lang: str = LANGUAGE) -> Path:
    return LOCALE_DIR / lang / "drafts"


# Messages that read the same in Korean: names and symbols a Korean course writes as they
# are. `--check` accepts them untranslated; anything else left as the English is an error.
SAME = frozenset({
    "ViT", "BERT", "GPT", "GPT-2", "LSTM", "RNN", "MLP", "CNN", "PCA", "CSV", "JSON", "PNG",
    "Q", "K", "V", "W_Q", "W_K", "W_V", "W_O", "QKᵀ", "[MASK]", "[CLS]", "softmax(QKᵀ/√d)",
    "Transformer Glassbox",  # the app's name
    "English",  # the language menu names each language in itself
    "auto", "cpu", "cuda",  # the device menu's values, as PyTorch names them
})  # fmt: skip
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def same_in_both(message: str) -> bool:
    """Whether a message may stay as it is in Korean: listed in SAME, or with no Latin
    letter outside its placeholders (numbers, symbols, "{a} · {b}")."""
    return message in SAME or not re.search(r"[A-Za-z]", _PLACEHOLDER.sub("", message))


# --- extraction and merging ------------------------------------------------------------


def extract() -> Catalog:
    """The source's messages, as a template (locations without line numbers are written)."""
    with MAPPING.open(encoding="utf-8") as cfg:
        method_map, options_map = parse_mapping_cfg(cfg, str(MAPPING))
    tops = {pattern.split("/", 1)[0] for pattern, _method in method_map}

    def enter(path: str) -> bool:  # only the folders babel.cfg names
        rel = Path(path).relative_to(ROOT).parts if Path(path).is_absolute() else Path(path).parts
        return not rel or rel[0] in tops

    template = Catalog(
        project=PROJECT,
        charset="utf-8",
        fuzzy=False,
        version="1",
        header_comment=HEADER.format(what="The messages"),
    )
    found = extract_from_dir(
        ROOT, method_map, options_map, keywords=KEYWORDS, comment_tags=("Translators:",),
        strip_comment_tags=True, directory_filter=enter,
    )  # fmt: skip
    for filename, lineno, message, comments, context in found:
        template.add(message, None, [(filename, lineno)], auto_comments=comments,
                     context=context)  # fmt: skip
    return template


def read_catalogue(path: Path, lang: str = LANGUAGE) -> Catalog:
    with path.open("rb") as file:
        return read_po(file, locale=lang, domain=DOMAIN)


def _translated(message: Message) -> bool:
    strings = message.string if isinstance(message.string, tuple) else (message.string,)
    return bool(strings) and all(strings)


def merge_drafts(catalog: Catalog, lang: str = LANGUAGE) -> list[str]:
    """Take every draft's translations into `catalog`; returns what went wrong (an
    unreadable draft, two drafts disagreeing), for the command to print."""
    said: list[str] = []
    source: dict[object, str] = {}
    for draft in sorted(drafts_dir(lang).glob("*.po")):
        try:
            entries = read_catalogue(draft, lang)
        except Exception as err:  # noqa: BLE001 - a broken draft must not stop the others
            said.append(f"{draft.relative_to(ROOT)}: not read ({type(err).__name__}: {err})")
            continue
        stale = []
        for entry in entries:
            if not entry.id or not _translated(entry):
                continue
            target = catalog.get(entry.id, entry.context)
            if target is None:  # not (or no longer) in the source: said, not merged
                stale.append(entry.id[0] if isinstance(entry.id, tuple) else entry.id)
                continue
            key = (entry.id, entry.context)
            if key in source and target.string != entry.string:
                said.append(f"{draft.name} and {source[key]} translate {entry.id!r} "
                            f"differently; {draft.name}'s is kept")  # fmt: skip
            if isinstance(target.string, tuple) and not isinstance(entry.string, tuple):
                target.string = (entry.string,)
            else:
                target.string = entry.string
            target.flags.discard("fuzzy")
            source[key] = draft.name
        if stale:
            said.append(f"{draft.name}: {len(stale)} translation(s) of messages not in the "
                        f"source (reworded or gone?), e.g. {stale[0]!r}")  # fmt: skip
    return said


def updated(template: Catalog, lang: str = LANGUAGE) -> Catalog:
    """The language's catalogue for `template`: its own translations kept, the messages no
    longer in the source dropped, the drafts' translations taken over."""
    path = po_path(lang)
    if path.is_file():
        catalog = read_catalogue(path, lang)
        catalog.update(template, no_fuzzy_matching=True, update_creation_date=False)
        catalog.obsolete.clear()
    else:
        catalog = Catalog(locale=lang, domain=DOMAIN, project=PROJECT, charset="utf-8",
                          creation_date=template.creation_date, fuzzy=False, version="1",
                          header_comment=HEADER.format(what=f"The {lang} catalogue"),
                          language_team=lang)  # fmt: skip
        catalog.update(template, no_fuzzy_matching=True)
    return catalog


def po_bytes(catalog: Catalog) -> bytes:
    out = io.BytesIO()
    write_po(out, catalog, width=96, include_lineno=False, sort_output=False,
             ignore_obsolete=True)  # fmt: skip
    return out.getvalue()


def compiled(po: bytes, lang: str = LANGUAGE) -> bytes:
    """The .mo of a .po's text (the test compares it with the committed one)."""
    catalog = read_po(io.BytesIO(po), locale=lang, domain=DOMAIN)
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


def _messages(catalog: Catalog) -> list[tuple]:
    return [(m.id, m.context, m.string) for m in catalog if m.id]


def _write(path: Path, data: bytes) -> None:
    """Write whole, then move into place (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and path.read_bytes() == data:
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@contextmanager
def locked() -> Iterator[None]:
    """One merge at a time on this machine (another translator's run waits)."""
    LOCALE_DIR.mkdir(parents=True, exist_ok=True)
    with LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _stable_template(template: Catalog) -> None:
    """Keep the template's date while its messages stay the same (no churn in git)."""
    if TEMPLATE.is_file():
        old = read_catalogue(TEMPLATE, lang=None)  # type: ignore[arg-type]
        template.creation_date = old.creation_date
        template.revision_date = old.revision_date
        if _shape(old) != _shape(template):
            template.creation_date = datetime.now(UTC)


def _shape(catalog: Catalog) -> list[tuple]:
    """What a template says, as written (files without line numbers)."""
    return [(m.id, m.context, sorted({f for f, _n in m.locations})) for m in catalog if m.id]


def build(lang: str = LANGUAGE) -> list[str]:
    """Extract, merge and compile (under the lock); returns the warnings."""
    with locked():
        template = extract()
        _stable_template(template)
        before = _messages(read_catalogue(po_path(lang), lang)) if po_path(lang).is_file() else []
        # Written first: Catalog.update shares a new message with the template, so the
        # drafts' Korean would otherwise end up in the template too.
        _write(TEMPLATE, po_bytes(template))
        catalog = updated(template, lang)
        said = merge_drafts(catalog, lang)
        if _messages(catalog) != before:
            catalog.revision_date = datetime.now(UTC)
        po = po_bytes(catalog)
        _write(po_path(lang), po)
        _write(mo_path(lang), compiled(po, lang))
    return said


# --- the completeness check ----------------------------------------------------------------


def missing(lang: str = LANGUAGE) -> list[str]:
    """Every message of the source that the committed catalogue leaves without its language:
    absent, empty, or left as the English (except `same_in_both`), with where it is."""
    template = extract()
    catalog = read_catalogue(po_path(lang), lang) if po_path(lang).is_file() else Catalog()
    found = []
    for message in template:
        if not message.id:
            continue
        where = ", ".join(f"{f}:{n}" for f, n in message.locations[:2])
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        entry = catalog.get(message.id, message.context)
        if entry is None or not _translated(entry):
            found.append(f"no Korean: {ids[0]!r} ({where})")
            continue
        strings = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        if any(s.strip() == i.strip() for s in strings for i in ids) and not all(
            same_in_both(i) for i in ids
        ):
            found.append(f"left as the English: {ids[0]!r} ({where})")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m i18n.catalogue",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="list the messages with no Korean in the committed catalogue",
    )
    args = parser.parse_args(argv)  # fmt: skip
    if args.check:
        found = missing()
        for line in found:
            print(line)
        print(f"{len(found)} message(s) without Korean" if found else "every message has Korean")
        return 1 if found else 0
    for line in build():
        print(f"warning: {line}", file=sys.stderr)
    template = read_catalogue(TEMPLATE, lang=None)  # type: ignore[arg-type]
    total = sum(1 for m in template if m.id)
    left = len(missing())
    print(f"{TEMPLATE.relative_to(ROOT)}: {total} messages; {po_path().relative_to(ROOT)}: "
          f"{total - left} in Korean, {left} not yet (--check lists them)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
