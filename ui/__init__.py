"""The app's shared frame (sidebar, state, URL) and caches; pages import from here.

Only this package and the pages import streamlit; the numbers come from `model`, the
figures from `viz`.
"""
