# judgebot: slim image, non-root user, history database on a volume.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    JUDGEBOT_DB=/data/judgebot.db

RUN useradd --create-home --uid 10001 judgebot \
    && mkdir -p /data \
    && chown judgebot:judgebot /data

WORKDIR /app
COPY pyproject.toml README.md manifest.yml ./
COPY bot ./bot
COPY rubrics ./rubrics
RUN pip install --no-cache-dir '.[postgres]'

USER judgebot
VOLUME ["/data"]
# HTTP mode listens here; Socket Mode (SLACK_APP_TOKEN set) needs no port.
EXPOSE 3000
# HTTP mode answers GET /health (200 while the history database answers); Socket Mode has no port to ask, so it is
# reported healthy while the process runs.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD ["python", "-c", "import os, urllib.request; os.environ.get('SLACK_APP_TOKEN') or urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('PORT', '3000'), timeout=4)"]
ENTRYPOINT ["judgebot"]
# The Slack bot by default, its history on the volume judgebot-data, e.g.
#   docker run -d --env-file .env -e JUDGEBOT_ADMINS=U0123ABCD,U0456EFGH -v judgebot-data:/data -p 3000:3000 judgebot
# (JUDGEBOT_ADMINS: who may change a channel's settings besides the workspace's admins). Any other command runs the
# CLI on your files, as your own user (the image's user cannot write a folder of the host), with a history beside them, e.g.
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD:/in" -w /in -e JUDGEBOT_DB=/in/judgebot.db -e OPENAI_API_KEY judgebot judge answers.csv --rubric eth
CMD ["serve"]
