"""One replica of the app: `streamlit run`, with deploy/failover.py's patch installed.

    python -m deploy.replica app.py [streamlit run's options...]

What deploy/serve.py starts for each replica, and what deploy/k8s/ runs in each pod: the
same as `streamlit run app.py ...`, except that a browser tab moving here from a replica
that died keeps its page, sentence and choices and answers its next input (see
deploy/failover.py).
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    from streamlit.web import cli

    from deploy import failover

    failover.install()
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["-h"], ["--help"]) or not args:
        print(__doc__.strip())
        return
    cli.main(["run", *args], prog_name="streamlit")


if __name__ == "__main__":
    main()
