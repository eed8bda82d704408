"""Settings read once from the environment and `.env`, then passed down."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.errors import SetupError


def loopback(host: str) -> bool:
    """Whether a server bound to `host` is reached by this machine only (127.0.0.0/8, ::1, localhost): the MCP server
    and the web view serve freely there, and ask for a sign-in anywhere else."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:  # a name, which may stand for any interface
        return False


def default_db_path() -> Path:
    """One history per user, whatever the working directory: $XDG_DATA_HOME/judgebot/judgebot.db."""
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "judgebot" / "judgebot.db"


NO_BOT_TOKEN = (
    "SLACK_BOT_TOKEN is not set. Create the app from manifest.yml at https://api.slack.com/apps, install it to "
    "your workspace, then copy the Bot User OAuth Token (xoxb-...) from the app's OAuth & Permissions page into "
    "SLACK_BOT_TOKEN (environment or .env)."
)
NO_MODE = (
    "Neither SLACK_APP_TOKEN nor SLACK_SIGNING_SECRET is set. For Socket Mode (no public URL needed), create an "
    "app-level token with the connections:write scope on the app's Basic Information page and set "
    "SLACK_APP_TOKEN (xapp-...). For HTTP mode, copy the Signing Secret from the same page into "
    "SLACK_SIGNING_SECRET and point the app's request URLs at https://<your host>/slack/events."
)
BAD_TOKEN = "{name} does not look right: {problem}."
BOTH_MODES = (
    "Both SLACK_BOT_TOKEN (one workspace) and SLACK_CLIENT_ID (many workspaces, installed through OAuth) are set: "
    "unset one of them."
)
HALF_OAUTH = (
    "Installing judgebot in many workspaces needs SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_SIGNING_SECRET "
    "(all three on the app's Basic Information page), in HTTP mode without SLACK_APP_TOKEN; missing or extra: {what}."
)

RENAMED = "{old} is now called {new} ({what}): rename it in the environment or .env; it is still read for now."


class Settings(BaseSettings):
    """Every setting of judgebot; each field is read from the env var of the same name in upper case."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    openai_api_key: SecretStr | None = Field(None, description="Key for the judge's OpenAI-compatible endpoint.")
    openai_base_url: str | None = Field(
        None, description="Base URL of an OpenAI-compatible server (vLLM, Ollama, llama.cpp, Azure); default OpenAI's."
    )
    judge_model: str = Field("gpt-6-luna", description="Model that does the judging (the default: OpenAI's model "
                             "for high-volume work, at reasoning effort low; see docs/judges.md).")
    judge_temperature: float = Field(0.0, description="Sampling temperature of the judge.")
    sample_temperature: float = Field(0.7, ge=0, le=2, description="Sampling temperature when each row is judged "
                                      "several times (samples).")
    judges: str = Field("", description="Comma-separated judge models of a jury on the configured endpoint.")
    judges_file: Path | None = Field(None, description="YAML file of a jury across endpoints: per judge a model, "
                                     "a base_url and the key_env naming the variable that holds its key.")
    unsure_spread: float = Field(25.0, gt=0, le=100, description="Headline points between a row's highest and "
                                 "lowest sample from which the row is marked unsure.")
    judge_reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"] | None = Field(
        None, description="reasoning_effort sent to a reasoning judge model (GPT-6, GPT-5.x, o-series): none, minimal, "
        "low, medium, high, xhigh or max. Unset: low for a model whose efforts the price table lists (docs/judges.md), "
        "else not sent.")
    judge_api: Literal["auto", "responses", "chat"] = Field(
        "auto", description="The API the judge is asked through: responses (OpenAI's Responses API), chat (Chat "
        "Completions, which vLLM, Ollama, llama.cpp and most compatible servers serve), or auto: responses on OpenAI's "
        "own endpoint (api.openai.com), chat on any other OPENAI_BASE_URL.")
    judge_max_completion_tokens: int | None = Field(
        None, ge=1, description="max_completion_tokens of each judge reply (reasoning tokens included); unset: not sent.")
    judge_prices: Path | None = Field(None, description="YAML file adding or overriding judge prices: per model, "
                                      "input, cached_input and output in USD per million tokens.")
    judge_shutdowns: Path | None = Field(None, description="YAML file adding or overriding judge models' announced "
                                         "shutdown dates: per model, shutdown, source and read (the day it was read).")
    confirm_above_usd: float = Field(5.0, ge=0, description="Estimated cost in USD above which a run asks before it "
                                     "starts (the terminal unless --yes; Slack with Start / Cancel buttons).")
    confirm_above_requests: int = Field(5_000, ge=0, description="Requests to judges of unknown price (no cost weighs "
                                        "them) above which a run asks before it starts, as above CONFIRM_ABOVE_USD.")
    judge_monthly_budget: float | None = Field(None, gt=0, description="USD the terminal's runs may spend a calendar "
                                               "month; a run that would go over asks, one that reaches it pauses.")
    batch_poll_seconds: float = Field(30.0, gt=0, le=3600, description="Seconds between two looks at a run's "
                                      "batches (--batch, the Batch API).")
    judge_timeout: float = Field(120.0, gt=0, description="Seconds one judge request may take.")
    judge_max_retries: int = Field(6, ge=0, description="Retries of one request on 429, 5xx, timeouts.")
    concurrency: int = Field(16, ge=1, le=512, description="Judge requests in flight at once.")
    judge_rpm: int | None = Field(None, ge=1, description="Requests a minute the judge endpoint allows each model "
                                  "(default: learned from its x-ratelimit-* headers).")
    judge_tpm: int | None = Field(None, ge=1, description="Tokens a minute the judge endpoint allows each model "
                                  "(default: learned from its x-ratelimit-* headers).")
    judge_rate_window: float = Field(60.0, gt=0, le=3600, description="Seconds the judge endpoint counts its limits "
                                     "over (OpenAI: a minute); JUDGE_RPM and JUDGE_TPM are per this many seconds.")
    database_url: str | None = Field(None, description="Any SQLAlchemy URL; default SQLite at JUDGEBOT_DB.")
    judgebot_db: Path = Field(default_factory=lambda: default_db_path(),
                              description="SQLite file used when DATABASE_URL is unset.")
    rubrics_dir: Path | None = Field(None, description="Extra directory of rubric files; same names override.")
    slack_bot_token: SecretStr | None = Field(None, description="Bot token (xoxb-...): OAuth & Permissions page.")
    slack_signing_secret: SecretStr | None = Field(
        None, description="Signing secret (Basic Information page); HTTP mode verifies every request with it.")
    slack_app_token: SecretStr | None = Field(
        None, description="App-level token (xapp-..., scope connections:write): set it to run in Socket Mode.")
    slack_client_id: str | None = Field(
        None, description="Many workspaces: the app's Client ID (Basic Information); with SLACK_CLIENT_SECRET and "
        "SLACK_SIGNING_SECRET instead of SLACK_BOT_TOKEN, each workspace installs the bot at /slack/install (HTTP mode).")
    slack_client_secret: SecretStr | None = Field(None, description="Many workspaces: the app's Client Secret.")
    slack_redirect_uri: str | None = Field(
        None, description="Many workspaces: the OAuth redirect URL, https://<your host>/slack/oauth_redirect (unset: "
        "the one the app's OAuth & Permissions page names).")
    secrets_key: SecretStr | None = Field(
        None, description="Many workspaces: a Fernet key that encrypts the OAuth install's Slack tokens in the history "
        "database (while rotating: the new key, a comma, the old one); unset, they are stored unencrypted.")
    slack_api_url: str = Field("https://slack.com/api/", description="Base URL of Slack's Web API.")
    port: int = Field(3000, ge=0, le=65535, description="HTTP mode: the port Slack's requests come to (0: any free one).")
    csv_max_mb: float = Field(20.0, gt=0, description="Largest CSV file a Slack run accepts, in MB.")
    csv_max_rows: int = Field(20_000, ge=1, description="Most data rows a CSV shared in Slack may have.")
    progress_edit_seconds: float = Field(3.0, ge=0.1, le=60, description="Seconds between two edits of a run's progress "
                                         "message in Slack (chat.update allows about one a second per channel).")
    stream_progress: bool = Field(True, description="Show a file run's progress as a message streamed into its thread "
                                  "(Slack's chat streaming); off, or where Slack refuses a stream: an edited message.")
    digest_timezone: str = Field("UTC", description="Timezone of weekly digests unless `/judge digest on` names one.")
    judgebot_admins: str = Field("", description="Comma-separated Slack user ids who may change a channel's settings "
                                 "(its digest, budget, reviewers, judge, samples, an aligned rubric), besides the "
                                 "workspace's admins and owners.")
    digest_admins: str = Field("", description="The former name of JUDGEBOT_ADMINS: still read, with a notice at "
                               "start to rename it.")
    digest_grace_hours: float = Field(12.0, gt=0, le=72, description="Hours after its time a digest missed while "
                                      "the bot was down is still posted.")
    calibration_min_agreement: float = Field(0.75, ge=0, le=1, description="Agreement with people's labels on "
                                             "pass/fail below which `/judge calibration` and the digest warn.")
    calibration_min_labels: int = Field(20, ge=1, description="Distinct labeled cases needed before low agreement "
                                        "is warned of (fewer say too little).")
    review_sample_rate: float = Field(0.05, ge=0, le=1, description="Share of each file's scored rows sent to the "
                                      "review queue at random (at least 3; 0: none), so that agreement with people "
                                      "is measured on cases nobody chose.")
    calibration_confirm_rows: int = Field(200, ge=0, description="Rows above which `judgebot calibration check` asks "
                                          "before judging them (unless --yes).")
    mcp_token: SecretStr | None = Field(None, description="Bearer token an agent presents to `judgebot mcp --http` "
                                        "(stdio needs none: it is the person at this machine; Slackbot presents "
                                        "Slack's signature instead, with SLACK_SIGNING_SECRET set).")
    mcp_channels: str = Field("", description="Comma-separated Slack channel ids whose stats and calibration an "
                              "agent with MCP_TOKEN may read (besides the terminal's and agents' own judgments).")
    mcp_allowed_hosts: str = Field("", description="Comma-separated Host headers `judgebot mcp --http` answers on a "
                                   "loopback address besides this machine's own: the public name a TLS proxy passes "
                                   "on (judgebot.example.com), as Slackbot reaches it.")
    view_url: str | None = Field(None, description="The public base URL of the web view, as people open it "
                                 "(https://judgebot.example.com/view: `judgebot serve` mounts it at /view). Set, cards, "
                                 "summaries and digests link to it (\"Open in judgebot\"), and with the OAuth install "
                                 "people sign in with Slack there (its /signin/callback among the app's Redirect URLs).")
    view_port: int | None = Field(None, ge=0, le=65535, description="Socket Mode: the port `judgebot serve` also "
                                  "serves the web view on, at http://127.0.0.1:VIEW_PORT/view (this machine only). "
                                  "Unset: no view in Socket Mode (HTTP mode mounts it at /view on PORT).")
    retention_days: int | None = Field(None, ge=1, description="Days judgments keep their texts (question, reference, "
                                       "answers, the judge's reasoning, notes); their figures stay. Unset: kept.")
    judgebot_log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("WARNING", description="Log level.")

    @field_validator("judgebot_log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("digest_timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown timezone {value!r}: use an IANA name such as Europe/Berlin or UTC") from None
        return value

    @property
    def admin_ids(self) -> frozenset[str]:
        """The user ids of JUDGEBOT_ADMINS, and of DIGEST_ADMINS (its former name, still read)."""
        return frozenset(part.strip() for names in (self.judgebot_admins, self.digest_admins)
                         for part in names.replace(";", ",").split(",") if part.strip())

    def renamed(self) -> list[str]:
        """A one-line notice for each setting still set under its former name (said at start): how to rename it."""
        if not self.digest_admins.strip():
            return []
        return [RENAMED.format(old="DIGEST_ADMINS", new="JUDGEBOT_ADMINS", what="the people who may change a "
                               "channel's settings, not only its digest")]

    @property
    def mcp_channel_ids(self) -> frozenset[str]:
        """The channel ids of MCP_CHANNELS."""
        return frozenset(part.strip() for part in self.mcp_channels.replace(";", ",").split(",") if part.strip())

    @property
    def secrets_keys(self) -> list[str]:
        """The keys of SECRETS_KEY, newest first."""
        text = self.secrets_key.get_secret_value() if self.secrets_key else ""
        return [part.strip() for part in text.split(",") if part.strip()]

    @property
    def mcp_public_hosts(self) -> frozenset[str]:
        """The Host headers of MCP_ALLOWED_HOSTS."""
        return frozenset(part.strip() for part in self.mcp_allowed_hosts.replace(";", ",").split(",") if part.strip())

    @field_validator("openai_base_url")
    @classmethod
    def _with_scheme(cls, value: str | None) -> str | None:
        if value is not None and value.strip() and urlsplit(value.strip()).scheme not in ("http", "https"):
            raise ValueError(f"{value!r} is not an http(s) URL: write it like http://localhost:11434/v1 or "
                             "https://api.openai.com/v1")
        return value.strip() if value else value

    @field_validator("view_url")
    @classmethod
    def _view_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parts = urlsplit(value.strip())
        if (parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment
                or any(char in value.strip() for char in " <>|\"'")):  # it goes into Slack's links and pages' hrefs
            raise ValueError(f"{value!r} is not the web view's base URL: write it like "
                             "https://judgebot.example.com/view")
        return value.strip().rstrip("/")

    @field_validator("slack_api_url")
    @classmethod
    def _trailing_slash(cls, value: str) -> str:
        return value if value.endswith("/") else value + "/"  # the Web API client appends method names to it

    @property
    def db_url(self) -> str:
        """The SQLAlchemy URL of the history store."""
        return self.database_url or f"sqlite:///{self.judgebot_db.expanduser()}"

    def has_judge_endpoint(self) -> bool:
        """Whether a key or a base URL says where the judge lives."""
        return bool(self.openai_api_key and self.openai_api_key.get_secret_value()) or bool(self.openai_base_url)

    def oauth_install(self) -> tuple[str, str] | None:
        """(client id, client secret) when each workspace installs the bot through Slack's OAuth flow, else None (one
        workspace, one SLACK_BOT_TOKEN); SetupError when the settings mix the two or lack a part."""
        client_id = (self.slack_client_id or "").strip()
        if not client_id and not self.slack_client_secret:
            return None
        bot_token, app_token, secret, client_secret = (
            value.get_secret_value().strip() if value else ""
            for value in (self.slack_bot_token, self.slack_app_token, self.slack_signing_secret,
                          self.slack_client_secret)
        )
        if bot_token:
            raise SetupError(BOTH_MODES)
        wrong = [name for name, bad in (("SLACK_CLIENT_ID", not client_id), ("SLACK_CLIENT_SECRET", not client_secret),
                                        ("SLACK_SIGNING_SECRET", not secret), ("SLACK_APP_TOKEN (set)", bool(app_token)))
                 if bad]
        if wrong:
            raise SetupError(HALF_OAUTH.format(what=", ".join(wrong)))
        return client_id, client_secret

    def view_sign_in(self) -> tuple[str, str] | None:
        """(client id, client secret) of Sign in with Slack for the web view: the OAuth install's, when VIEW_URL says
        where people open the view; else None (the view then answers only this machine)."""
        install = self.oauth_install()
        return install if install is not None and self.view_url else None

    def bot_token(self) -> str:
        """The one SLACK_BOT_TOKEN, or SetupError saying it is missing or is not a bot token."""
        token = self.slack_bot_token.get_secret_value().strip() if self.slack_bot_token else ""
        if not token:
            raise SetupError(NO_BOT_TOKEN)
        if not token.startswith("xoxb-"):
            raise SetupError(BAD_TOKEN.format(name="SLACK_BOT_TOKEN", problem="a bot token starts with xoxb- "
                             "(the Bot User OAuth Token on the app's OAuth & Permissions page)"))
        return token

    def slack_tokens(self) -> tuple[str, str | None, str | None]:
        """(bot token, app token, signing secret), or SetupError naming what is missing or malformed.

        With the OAuth install (`oauth_install`) there is no one bot token: it is "" and the signing secret is set.
        """
        bot_token, app_token, secret = (
            value.get_secret_value().strip() if value else ""
            for value in (self.slack_bot_token, self.slack_app_token, self.slack_signing_secret)
        )
        if self.oauth_install() is not None:
            return "", None, secret
        bot_token = self.bot_token()
        if app_token and not app_token.startswith("xapp-"):
            raise SetupError(BAD_TOKEN.format(name="SLACK_APP_TOKEN", problem="an app-level token starts with xapp- "
                             "(Basic Information > App-Level Tokens, scope connections:write)"))
        if not app_token and not secret:
            raise SetupError(NO_MODE)
        return bot_token, app_token or None, secret or None
