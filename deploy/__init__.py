"""Serving a class: N Streamlit replicas behind nginx on one machine (deploy/serve.py)."""
