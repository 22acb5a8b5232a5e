"""One replica of the app: `streamlit run`, with deploy/failover.py's patch installed.

    python -m deploy.replica app.py [streamlit run's options...]

What deploy/serve.py starts for each replica, and what deploy/k8s/ runs in each pod: the
same as `streamlit run app.py ...`, except that a browser tab moving here from a replica
that died keeps its page, sentence and choices and answers its next input (see
deploy/failover.py), and that SIGTERM (a rolling update: `supervisorctl restart`) ends it
within about STOP_GRACE_S: it stops taking connections, closes every tab's websocket (the
tabs reconnect to another replica), and exits 0. Unpatched, uvicorn waited for each closed
websocket's closing handshake (10 s through nginx) before the process could exit.
"""

from __future__ import annotations

import sys

STOP_GRACE_S = 2  # after SIGTERM, what still runs on a connection is cancelled after this


def _stop_soon() -> None:
    """Give uvicorn a graceful-shutdown timeout (Streamlit 1.67 sets none)."""
    from streamlit.web.server.starlette import starlette_server

    kwargs = starlette_server._get_uvicorn_config_kwargs
    if getattr(kwargs, "_glassbox", False):
        return

    def with_timeout() -> dict:
        return {**kwargs(), "timeout_graceful_shutdown": STOP_GRACE_S}

    with_timeout._glassbox = True
    starlette_server._get_uvicorn_config_kwargs = with_timeout


def main(argv: list[str] | None = None) -> None:
    from streamlit.web import cli

    from deploy import failover

    failover.install()
    _stop_soon()
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["-h"], ["--help"]) or not args:
        print(__doc__.strip())
        return
    cli.main(["run", *args], prog_name="streamlit")


if __name__ == "__main__":
    main()

