"""Token and fixed-format rules of the secret scrubber, as data: a kind, literal keywords, a regex.

:mod:`devops_agent.privacy.secrets` turns each :class:`TokenSpec` into a rule: the regex runs only on
lines holding one of the keywords (lower-case keywords match case-insensitively), and a match that
looks hand-typed (``ghp_xxxx…``, ``…EXAMPLE``) or is cut short by a mask is dropped there. A pattern
anchors on a distinctive literal prefix or context, so that no rule needs an entropy test on ordinary
text; ``group`` picks the secret part when the match holds context too.

This module imports nothing from the package (``secrets`` imports it), and every regex is written
without nested unbounded quantifiers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TokenSpec:
    """One token or format rule: ``kind`` names what was found, never the value."""

    kind: str
    keywords: tuple[str, ...]
    pattern: str
    flags: int = 0
    group: int | str = 0
    multiline: bool = False


def _t(
    kind: str,
    keywords: Iterable[str],
    pattern: str,
    flags: int = 0,
    group: int | str = 0,
    *,
    multiline: bool = False,
) -> TokenSpec:
    return TokenSpec(kind, tuple(keywords), pattern, flags, group, multiline)


_B = r"(?<![A-Za-z0-9_])"  # token start boundary ("\b" is wrong before a prefix like "_" or "-")
_E = r"(?![A-Za-z0-9_])"

TOKEN_RULES: tuple[TokenSpec, ...] = (
    _t(
        "aws_access_key_id",
        ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
        _B + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}" + _E,
    ),
    _t("github_token", ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], _B + r"gh[pousr]_[A-Za-z0-9]{36,255}" + _E),
    _t("github_pat", ["github_pat_"], _B + r"github_pat_[A-Za-z0-9_]{22,255}"),
    _t("gitlab_token", ["gl"], _B + r"gl(?:pat|dt|ptt|rt|cbt|oas|soat|ffct|imt|agent|ft)-[A-Za-z0-9_-]{20,}"),
    _t("gitlab_runner_token", ["GR1348941"], _B + r"GR1348941[A-Za-z0-9_-]{20,}"),
    _t(
        "slack_token",
        ["xox"],
        _B + r"xox[abpsr]-\d{6,}-[A-Za-z0-9-]{10,}|" + _B + r"xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9]{60,}",
    ),
    _t("slack_app_token", ["xapp-"], _B + r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"),
    _t(
        "slack_webhook",
        ["hooks.slack.com"],
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
    ),
    _t("stripe_key", ["_live_", "_test_", "_prod_"], _B + r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}"),
    _t("stripe_webhook_secret", ["whsec_"], _B + r"whsec_[A-Za-z0-9]{24,}"),
    _t("twilio_api_key", ["SK"], _B + r"SK[0-9a-fA-F]{32}" + _E),
    _t("sendgrid_key", ["SG."], _B + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _E),
    _t("npm_token", ["npm_"], _B + r"npm_[A-Za-z0-9]{36}" + _E),
    _t("pypi_token", ["pypi-"], _B + r"pypi-Ag[A-Za-z0-9_-]{50,}"),
    _t("anthropic_key", ["sk-ant-"], _B + r"sk-ant-(?:api|admin|sid)\d\d-[A-Za-z0-9_-]{93}AA" + _E),
    _t("openai_key", ["T3BlbkFJ"], _B + r"sk-(?:[a-z]+-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}"),
    _t(
        "openai_key",
        ["sk-"],
        _B + r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|" + _B + r"sk-[A-Za-z0-9]{48}" + _E,
    ),
    _t("google_api_key", ["AIza"], _B + r"AIza[0-9A-Za-z_-]{35}" + _E),
    _t("google_oauth_secret", ["gocspx-"], _B + r"GOCSPX-[A-Za-z0-9_-]{28}"),
    _t("google_oauth_token", ["ya29."], _B + r"ya29\.[0-9A-Za-z_-]{20,}"),
    _t("heroku_key", ["hrku-"], _B + r"HRKU-[A-Za-z0-9_-]{20,}"),
    _t("mailgun_key", ["key-"], _B + r"key-[0-9a-f]{32}" + _E),
    _t(
        "shopify_token",
        ["shpat_", "shpca_", "shppa_", "shpss_"],
        _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E,
    ),
    _t("digitalocean_token", ["_v1_"], _B + r"do[opr]_v1_[a-f0-9]{64}" + _E),
    _t("vault_token", ["hvs.", "hvb.", "hvr."], _B + r"hv[sbr]\.[A-Za-z0-9_-]{24,}"),
    # Legacy (< 1.10) batch tokens: "b." and a base64url protobuf that starts with version 1.
    _t("vault_token", ["b.AAAAAQ"], _B + r"b\.AAAAAQ[A-Za-z0-9_-]{100,}"),
    _t("atlassian_token", ["ATATT", "ATCTT"], _B + r"AT[AC]TT3[A-Za-z0-9_=-]{60,}"),
    _t("discord_webhook", ["/api/webhooks/"], r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}"),
    _t(
        "discord_bot_token",
        ["discord", "bot"],
        _B + r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}" + _E,
    ),
    _t("telegram_bot_token", [":AA"], _B + r"\d{8,10}:AA[0-9A-Za-z_-]{30,35}" + _E),
    _t("tavily_key", ["tvly-"], _B + r"tvly-[A-Za-z0-9]{32}" + _E),
    _t("sourcegraph_token", ["sgp_"], _B + r"sgp_(?:[A-Fa-f0-9]{16}_|local_)?[A-Fa-f0-9]{40}" + _E),
    _t("facebook_token", ["EAA"], _B + r"EAA[A-Za-z0-9]{90,}"),
    _t("facebook_app_token", ["|"], _B + r"\d{15,16}\|[A-Za-z0-9_-]{27}" + _E),
    _t("notion_token", ["ntn_"], _B + r"ntn_[A-Za-z0-9]{40,}"),
    _t("intra42_secret", ["s-s4t2"], _B + r"s-s4t2(?:ud|af)-[a-f0-9]{64}" + _E),
    _t("onepassword_token", ["ops_eyj"], _B + r"ops_eyJ[A-Za-z0-9+/=_-]{100,}"),
    _t("grafana_api_key", ["eyJrIjoi"], r"eyJrIjoi[A-Za-z0-9+/]{40,}={0,2}"),
    _t(
        "square_token",
        ["sq0atp-", "sq0csp-", "eaaa"],
        _B + r"sq0(?:atp-[A-Za-z0-9_-]{22}|csp-[A-Za-z0-9_-]{43})" + _E,
    ),
    _t("twitch_stream_key", ["live_"], _B + r"live_\d{6,10}_[A-Za-z0-9]{30}" + _E),
    _t("salesforce_token", ["00D"], _B + r"00D[A-Za-z0-9]{12,15}![A-Za-z0-9_.]{80,}"),
    _t("sonarqube_token", ["sqa_", "squ_", "sqp_"], _B + r"sq[upa]_[a-f0-9]{40}" + _E),
    _t(
        "sonarqube_token",
        ["sonar"],
        r"(?i)sonar[._]?(?:login|token)[\"']?[ \t]*(?:[:=]|,)[ \t]*[\"']?([a-f0-9]{40})" + _E,
        group=1,
    ),
    _t("vault_unseal_key", ["unseal"], r"(?i)unseal(?: key \d+:)?[ \t]+([A-Za-z0-9+/]{43,}={0,2})", group=1),
    _t("jwt", ["eyJ"], _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    _t(
        "azure_storage_key",
        ["accountkey=", "sharedaccesskey="],
        r"(?i:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})",
        group=1,
    ),
    _t("azure_sas_signature", ["sig="], r"[?&;]sig=([A-Za-z0-9%+/]{20,}(?:%3[dD]|=){0,2})", group=1),
    _t(
        "azure_client_secret",
        ["q~"],
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
    ),
    _t(
        "newrelic_key",
        ["NRAK-", "NRII-", "NRJS-", "NRAA-", "NRIQ-", "NRRA-"],
        _B + r"NR(?:AK|II|JS|AA|IQ|RA)-[A-Za-z0-9_-]{19,42}",
    ),
    _t("sentry_token", ["sntrys_", "sntryu_"], _B + r"sntry[su]_[A-Za-z0-9_=+/-]{40,}"),
    _t("linear_key", ["lin_api_"], _B + r"lin_api_[A-Za-z0-9]{40}"),
    _t("postman_key", ["pmak-"], _B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    _t("age_secret_key", ["age-secret-key-"], r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    _t("dockerhub_pat", ["dckr_pat_"], _B + r"dckr_pat_[A-Za-z0-9_-]{27,}"),
    _t("huggingface_token", ["hf_"], _B + r"hf_[A-Za-z]{34}" + _E),
    _t("databricks_token", ["dapi"], _B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E),
    _t("grafana_token", ["glc_", "glsa_"], _B + r"gl(?:c|sa)_[A-Za-z0-9_+/=-]{32,}"),
    _t("doppler_token", ["dp."], _B + r"dp\.(?:st|pt|ct|sa|scim|audit)\.[A-Za-z0-9_.-]{40,}"),
    _t("pulumi_token", ["pul-"], _B + r"pul-[a-f0-9]{40}" + _E),
    _t("adafruit_key", ["aio_"], _B + r"aio_[A-Za-z0-9]{28}" + _E),
    _t(
        "teams_webhook",
        ["webhook"],
        r"(?:outlook\.office(?:365)?\.com/webhook|\.webhook\.office\.com/webhookb2)/[A-Za-z0-9@/_-]{40,}",
    ),
    _t("nuget_key", ["oy2"], _B + r"oy2[a-z0-9]{43}" + _E),
    _t("newrelic_license_key", ["NRAL"], _B + r"[A-Za-z0-9]{36}NRAL" + _E),
    _t("mapbox_token", ["k.eyJ"], _B + r"[spt]k\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    _t("mailchimp_key", ["-us"], _B + r"[0-9a-f]{32}-us\d{1,2}" + _E),
    _t("azure_devops_pat", ["AZDO"], _B + r"[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}" + _E),
    _t(
        "google_client_id",
        ["apps.googleusercontent.com"],
        r"\d{12}-[a-z0-9]{32}\.apps\.googleusercontent\.com",
    ),
    _t("base64_private_key", ["LS0tLS1CRUdJTi"], r"LS0tLS1CRUdJTi[A-Za-z0-9+/=]{20,}"),
    _t("dynatrace_token", ["dt0c01."], r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    _t("dependency_track_key", ["odt_"], _B + r"odt_[A-Za-z0-9]{32,}"),
    _t("cratesio_token", ["cio"], _B + r"cio[A-Za-z0-9]{32}" + _E),
    _t(
        "k8s_bootstrap_token",
        ["bootstrap-token"],
        r"(?i)bootstrap-token[\s=:\"']+([a-z0-9]{6}\.[a-z0-9]{16})",
        group=1,
    ),
    _t(
        "jenkins_crumb", ["jenkins-crumb"], r"(?i)Jenkins-Crumb[\"']?\s*[:=]\s*[\"']?([a-f0-9]{32,})", group=1
    ),
    _t(
        "dotnet_credential",
        ["networkcredential", "directoryentry"],
        r"(?:NetworkCredential|DirectoryEntry)\(\s*(?:\"[^\"\n]*\"\s*,\s*){1,2}\"([^\"\n]{3,})\"",
        group=1,
        multiline=True,
    ),
    # Printed once by a new Jenkins controller (also in /var/jenkins_home/secrets/initialAdminPassword).
    _t(
        "jenkins_setup_password",
        ["password to proceed to installation"],  # Jenkins' exact wording, so the scan is case-sensitive
        r"password to proceed to installation:\s{1,10}([a-f0-9]{32})(?![a-f0-9])",
        group=1,
        multiline=True,
    ),
    _t(
        "codeclimate_reporter_id",
        ["cc_test_reporter_id"],
        r"(?i)CC_TEST_REPORTER_ID[\"']?[ \t]*[:=][ \t]*[\"']?([a-f0-9]{64})(?![a-f0-9])",
        group=1,
    ),
    # Postmark server/account tokens are UUIDs: only a Postmark key or header makes one a secret.
    _t(
        "postmark_token",
        ["postmark"],
        r"(?i)postmark(?:[_.-]?(?:server|account|api))?(?:[_.-]?(?:token|key))?[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![0-9a-f-])",
        group=1,
    ),
    # TrueNAS API keys ("<id>-<64 alphanumerics>") passed to the WebSocket login method.
    _t(
        "truenas_api_key",
        ["login_with_api_key"],
        r"login_with_api_key[\"'][^\[\]]{0,60}\[\s{0,20}[\"'](\d{1,6}-[A-Za-z0-9]{64})[\"']",
        group=1,
        multiline=True,
    ),
    _t(
        "aws_bedrock_key", ["ABSKQmVkcm9ja0FQSUtleS"], _B + r"ABSKQmVkcm9ja0FQSUtleS[A-Za-z0-9+/]{100,}={0,2}"
    ),
    # ~/.pgpass lines, hostname:port:database:username:password (PostgreSQL's documented format);
    # keyed on the default port or a wildcard, which nearly every such line has.
    _t(
        "pgpass_password",
        [":5432:", ":*:"],
        r"(?m)^[^:\s#]{1,253}:(?:5432|\*):[^:\s]{1,63}:[^:\s]{1,63}:((?:[^:\s\\]|\\.){1,200})$",
        group=1,
    ),
    _t("psexec_password", ["psexec"], r"(?i)psexec[^\n]{0,200}?\s-p\s+([^\s$%][^\s]*)", group=1),
    # The MySQL / MariaDB clients take the password glued to -p (``-phunter2``, ``-p'x y'`` is
    # not accepted by them); ``-p`` alone prompts, and ``-p dbname`` names the database, so only the
    # glued form is a secret. ``-P`` is the port. The command must precede it on the same command
    # (not after ``|``, ``;`` or ``&``), so ``mkdir -p`` elsewhere on the line is left alone; other
    # programs of the family (``mysql_config ... -pthread``) are not clients.
    _t(
        "mysql_password",
        ["mysql", "mariadb"],
        r"(?i:\b(?:mysql(?:dump|admin|import|show|check|pump|slap|binlog|sh)?|mariadb(?:-[a-z]+)?)(?:\.exe)?)"
        r"(?=[ \t])[^\n|;&]{0,200}?\s-p[\"']?([^\s\"'$%<{\[-][^\s\"']*)",
        group=1,
    ),
    # sshpass -p PASSWORD (glued or not); -f FILE / -e (the SSHPASS variable) carry no secret.
    _t(
        "sshpass_password",
        ["sshpass"],
        r"(?i:\bsshpass)[^\n|;&]{0,100}?\s-p[ \t]*[\"']?([^\s\"'$%<{\[-][^\s\"']*)",
        group=1,
    ),
    _t(
        "password_hash",
        ["$"],
        r"\$(?:1|2[abxy]?|5|6|8|9|7|apr1|y|gy|sha1|md5|pbkdf2(?:-sha\d+)?|krb5[a-z]+|argon2(?:id|i|d))\$"
        r"[./A-Za-z0-9=,+@:$-]{0,60}\$[./A-Za-z0-9=+:$-]{20,}",
    ),
    # --- more provider formats: a fixed, documented prefix; the length where it is fixed -------------
    _t("buildkite_token", ["bkua_"], _B + r"bkua_[A-Za-z0-9]{40}" + _E),
    _t("circleci_token", ["CCIPAT_", "CCIPRJ_"], _B + r"CCI(?:PAT|PRJ)_[A-Za-z0-9]{22}_[a-f0-9]{40}" + _E),
    _t("artifactory_token", ["AKCp"], _B + r"AKCp[A-Za-z0-9]{69}" + _E),
    # JFrog reference tokens are base64 of "reftkn:01:…".
    _t("artifactory_token", ["cmVmdGtuOjAxOj"], _B + r"cmVmdGtuOjAxOj[A-Za-z0-9+/]{40,}={0,2}"),
    _t("bitbucket_app_password", ["ATBB"], _B + r"ATBB[A-Za-z0-9_=.-]{32}" + _E),
    _t("terraform_cloud_token", ["atlasv1"], _B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}" + _E),
    _t("openshift_token", ["sha256~"], _B + r"sha256~[A-Za-z0-9_-]{43}" + _E),
    _t("tailscale_key", ["tskey-"], _B + r"tskey-[a-z]{3,8}-[A-Za-z0-9]{6,20}-[A-Za-z0-9]{16,}"),
    _t("cloudflare_origin_ca_key", ["v1.0-"], _B + r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}" + _E),
    _t("flyio_token", ["fo1_"], _B + r"fo1_[A-Za-z0-9_-]{43}" + _E),
    _t("flyio_token", ["fm1", "fm2_"], _B + r"fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}"),
    _t("netlify_token", ["nfp_"], _B + r"nfp_[A-Za-z0-9]{36}" + _E),
    # Render keys have no published length; require a digit so a long identifier is not one.
    _t("render_key", ["rnd_"], _B + r"rnd_(?=[A-Za-z]{0,60}[0-9])[A-Za-z0-9]{24,64}" + _E),
    _t("supabase_token", ["sbp_"], _B + r"sbp_[a-f0-9]{40}" + _E),
    _t("supabase_token", ["sb_secret_"], _B + r"sb_secret_[A-Za-z0-9_-]{20,}"),
    _t("planetscale_token", ["pscale_"], _B + r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64}"),
    _t("octopus_deploy_key", ["API-"], _B + r"API-[A-Z0-9]{26}" + _E),
    _t(
        "harness_token",
        ["pat.", "sat."],
        _B + r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[a-f0-9]{24}\.[A-Za-z0-9]{20}" + _E,
    ),
    # Not after a dot: "favicon.ico-<hash>" is a file name.
    _t("infracost_key", ["ico-"], r"(?<![A-Za-z0-9_.-])ico-[A-Za-z0-9]{32}" + _E),
    _t("alibaba_access_key_id", ["LTAI"], _B + r"LTAI[A-Za-z0-9]{12,20}" + _E),
    _t("scaleway_access_key", ["SCW"], _B + r"SCW[A-Z0-9]{17}" + _E),
    # Package registries.
    _t("rubygems_key", ["rubygems_"], _B + r"rubygems_[a-f0-9]{48}" + _E),
    # AI services.
    _t("groq_key", ["gsk_"], _B + r"gsk_[A-Za-z0-9]{52}" + _E),
    _t("replicate_token", ["r8_"], _B + r"r8_[A-Za-z0-9]{37}" + _E),
    _t("perplexity_key", ["pplx-"], _B + r"pplx-[A-Za-z0-9]{48}" + _E),
    _t("xai_key", ["xai-"], _B + r"xai-(?=[A-Za-z]{0,80}[0-9])[A-Za-z0-9]{80}" + _E),
    _t("openrouter_key", ["sk-or-v1-"], _B + r"sk-or-v1-[a-f0-9]{64}" + _E),
    _t("langsmith_key", ["lsv2_"], _B + r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}" + _E),
    _t("huggingface_token", ["api_org_"], _B + r"api_org_[A-Za-z]{34}" + _E),
    _t("prefect_key", ["pnu_"], _B + r"pnu_[A-Za-z0-9]{36}" + _E),
    # redis.conf / sentinel.conf: "requirepass <pw>", "masterauth <pw>" (a commented line is not one).
    _t(
        "redis_password",
        ["requirepass", "masterauth"],
        r"(?im)^[ \t]*(?:requirepass|masterauth)[ \t]+(\"?)([^\s\"]{1,200})\1[ \t]*$",
        group=2,
    ),
    _t("redis_password", ["redis-cli"], r"redis-cli[^\n]{0,200}?[ \t]-a[ \t]+([^\s$%-][^\s]{2,})", group=1),
    # SMTP / POP3 SASL initial responses: PLAIN is base64 of "authzid\0user\0password", XOAUTH2 and
    # OAUTHBEARER carry a bearer token. "AUTH LOGIN" sends the user name (base64) and prompts.
    _t(
        "sasl_credentials",
        ["AUTH PLAIN", "AUTH XOAUTH2", "AUTH OAUTHBEARER"],
        r"(?<![A-Za-z0-9_-])AUTH[ \t]+(?:PLAIN|XOAUTH2|OAUTHBEARER)[ \t]+([A-Za-z0-9+/]{8,}={0,2})"
        r"(?![A-Za-z0-9+/=])",
        group=1,
    ),
    # Sourcegraph's older tokens are bare 40-hex strings: only a Sourcegraph key makes one a secret.
    _t(
        "sourcegraph_token",
        ["sourcegraph"],
        r"(?i)sourcegraph[A-Za-z0-9_.-]{0,20}[\"']?[ \t]*[:=][ \t]*[\"']?([a-f0-9]{40})(?![a-f0-9])",
        group=1,
    ),
)
