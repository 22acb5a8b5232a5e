"""The two languages (issue 31): the catalogue, the particle helper, the language kept in
the URL, and every page drawn in Korean without English left in it."""

from __future__ import annotations

from i18n import catalogue

# --- the catalogue -------------------------------------------------------------------------


def test_the_committed_mo_is_the_committed_po_compiled() -> None:
    """Whoever changes the .po runs `python -m i18n.catalogue`, which compiles the .mo."""
    po = catalogue.po_path().read_bytes()
    assert catalogue.mo_path().read_bytes() == catalogue.compiled(po), (
        "locale/ko/LC_MESSAGES/glassbox.mo is stale: run python -m i18n.catalogue"
    )


def test_every_message_has_korean() -> None:
    """`python -m i18n.catalogue --check` as a test: every message of the source is in the
    committed Korean catalogue, none empty, none left as the English (catalogue.SAME)."""
    found = catalogue.missing()
    assert not found, f"{len(found)} message(s) without Korean:\n" + "\n".join(found)


def test_the_same_in_both_languages() -> None:
    assert catalogue.same_in_both("ViT") and catalogue.same_in_both("{layer} · {head}")
    assert catalogue.same_in_both("12 → 3") and not catalogue.same_in_both("Attention")
