"""One replica of the app: the app served by Streamlit's public `st.App`, with
deploy/failover.py's patch installed.

    python -m deploy.replica app.py [--server.port 8501] [--server.address ADDR] ...

What deploy/serve.py starts for each replica, and what deploy/k8s/ runs in each pod: the
same as `streamlit run app.py ...` (the options are Streamlit's config options, as on its
command line), except that a browser tab moving here from a replica that died keeps its
page, sentence and choices and answers its next input (deploy/failover.py). SIGTERM (a
rolling update: `supervisorctl restart`) stops it: it stops taking connections, closes
every tab's websocket (the tabs reconnect to another replica), and exits 0.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path


def options(args: list[str]) -> dict[str, str]:
    """`--server.port 8501` and `--server.port=8501` pairs as Streamlit's config overrides."""
    config: dict[str, str] = {}
    rest = list(args)
    while rest:
        flag = rest.pop(0)
        if not flag.startswith("--") or "." not in flag:
            raise SystemExit(f"deploy.replica: not a config option: {flag!r}")
        name, _, value = flag[2:].partition("=")
        if not _:
            if not rest:
                raise SystemExit(f"deploy.replica: {flag} needs a value")
            value = rest.pop(0)
        config[name] = value
    return config


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["-h"], ["--help"]) or not args:
        print(__doc__.strip())
        return
    import streamlit as st

    from deploy import failover

    failover.install()
    # uvicorn stops on SIGTERM, then raises the signal again for the handler it found: this
    # one, so that a rolling update's stop is an exit with status 0, not a death by signal.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    script = str(Path(args[0]).resolve())
    config = options(args[1:])
    sys.argv = [script]  # the app is its own launcher: config and pages found beside it
    st.App(script).run(config=config)


if __name__ == "__main__":
    main()
