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
ENTRYPOINT ["judgebot"]
# The Slack bot by default; any other command runs the CLI, e.g.
#   docker run --rm -v judgebot:/data -v "$PWD:/in" -e OPENAI_API_KEY judgebot judge /in/answers.csv --rubric eth --out /in/answers.results.csv
CMD ["serve"]
