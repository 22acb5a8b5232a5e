# Transformer Glassbox: the Streamlit app on the shipped models.
#
#   docker build -t glassbox .
#   docker run --rm -p 8501:8501 glassbox            # then open http://localhost:8501
#
# CPU-only PyTorch by default (a ~200 MB wheel instead of the CUDA one's few GB). For an NVIDIA
# GPU build with the CUDA wheels and run with the GPU passed through:
#   docker build --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128 -t glassbox:gpu .
#   docker run --rm --gpus all -p 8501:8501 glassbox:gpu
FROM python:3.11-slim

ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# nginx: deploy.serve's front (N replicas under supervisord in one container:
# `python -m deploy.serve --address 0.0.0.0 --port 8080`), and the static files' pods of
# deploy/k8s/static.yaml. Only its binary is used, with configs of our own.
RUN apt-get update && apt-get install -y --no-install-recommends nginx \
    && rm -rf /var/lib/apt/lists/*

# Dependencies first, so a code change does not reinstall them. `torch==2.13.0` in
# requirements.txt also matches the index's `2.13.0+cpu` build, which pip then prefers.
COPY requirements.txt .
RUN pip install ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"} -r requirements.txt

# The app: code, .streamlit/config.toml and the shipped checkpoints (see .dockerignore).
RUN useradd --create-home --uid 10001 glassbox
COPY --chown=glassbox:glassbox . .
USER glassbox

EXPOSE 8501

# Streamlit answers "ok" on /_stcore/health once it serves; the image has no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request as u; r = u.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4); sys.exit(0 if r.read().strip() == b'ok' else 1)"]

# The settings in .streamlit/config.toml apply (headless, no watcher, 1 MB uploads); these
# flags only open the server to the container's network.
CMD ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501"]
