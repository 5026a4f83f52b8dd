"""Rebuild ``secret_examples.jsonl``: examples of the secret rules gitleaks' own do not cover.

    python tests/redact/data/make_secret_examples.py > tests/redact/data/secret_examples.jsonl

One JSON line per example: the rule it is for, the sample, the secret in it and where its shape
comes from. Random parts are drawn with a fixed seed. Three groups: our own rules and those of
``redact/data/more_rules.toml`` (the providers' documented shapes); gitleaks rules whose Go
examples ``make_gitleaks_tps.py`` cannot evaluate, written after them (gitleaks,
``cmd/generate/config/rules/*.go``, MIT; see THIRD_PARTY_NOTICES.md); and the shapes issue 28
found leaking: in a sentence, in base64, after a secret's name (and later leak hunts: a Cookie
header; a secret as a command's option, an Authorization header of any scheme, a name and value
in JSON escaped inside a text; a query percent-encoded in a URL, a command's short option, an
object under a secret's name).
"""

from __future__ import annotations

import base64
import json
import random
import string

RANDOM = random.Random(28)
ALNUM = string.ascii_letters + string.digits
LOWER = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
GITLEAKS = "gitleaks cmd/generate/config/rules (MIT)"
ISSUE = "issue 28"
ALPHABET = "abcdefghijklmnopqrstuvwxyz"
API = "https://api.github.com/user"


def draw(size: int, chars: str = ALNUM) -> str:
    """``size`` random characters of ``chars``."""
    return "".join(RANDOM.choice(chars) for _ in range(size))


def b64(text: str) -> str:
    """``text`` in standard base64."""
    return base64.b64encode(text.encode()).decode()


ROWS: list[dict[str, str]] = []


def add(rule: str, sample: str, secret: str, origin: str = "knowledgepulse") -> None:
    """One example: ``secret`` inside ``sample``, for ``rule``."""
    assert secret in sample, (rule, sample, secret)
    ROWS.append({"rule": rule, "sample": sample, "secret": secret, "origin": origin})


def ours() -> None:
    """The reference SDK's patterns and our own rules."""
    password = draw(14)
    add(
        "connection-string",
        f"DATABASE_URL=postgres://app:{password}@db.internal:5432/orders",
        password,
    )
    token = draw(40, ALNUM + "-_.")
    add("bearer-token", f"curl -H 'Authorization: Bearer {token}' https://api.example.com", token)
    token = "sk-proj-" + draw(48, ALNUM + "_-")
    add("openai-key", f"Set OPENAI_API_KEY to {token}.", token)
    token = "ghp_" + draw(36)
    add("github-token", f"git push https://x-access-token:{token}@github.com/org/repo.git", token)
    token = "AKIA" + draw(16, string.ascii_uppercase + string.digits)
    add("aws-key", f"aws configure set aws_access_key_id {token}", token)
    token = "kp_" + draw(32, HEX)
    add("kp-key", f"KnowledgePulse key {token} for the registry", token)
    token = f"xoxb-{draw(11, string.digits)}-{draw(13, string.digits)}-{draw(24)}"
    add("slack-token", f"Posting with the bot token {token}.", token)
    password = draw(16)
    add(
        "url-credentials",
        f"Cloning https://deploy:{password}@git.example.com/team/app.git",
        password,
    )
    add("password-assignment", f"password: {ALPHABET}", ALPHABET)
    encoded = b64(f"admin:{draw(12)}")
    add("basic-auth", f"Authorization: Basic {encoded}", encoded)
    encoded = b64(f"x-access-token:ghp_{draw(36)}")
    add("encoded-secret", f"echo {encoded} | base64 -d", encoded)


def gitleaks() -> None:
    """gitleaks rules whose examples make_gitleaks_tps.py cannot evaluate."""
    token = f"sc_{draw(10, LOWER)}.{draw(4, LOWER)}.acc_{draw(10, LOWER)}.{draw(40, LOWER + '_-')}"
    add("authress-service-client-access-key", f'authressToken = "{token}"', token, GITLEAKS)
    token = draw(11, LOWER) + "AAAAAAAAAA" + draw(43, LOWER + "-_=")
    add("dropbox-long-lived-api-token", f'dropbox_token = "{token}"', token, GITLEAKS)
    token = "sl." + draw(135, LOWER + "-_=")
    add("dropbox-short-lived-api-token", f"DROPBOX_TOKEN={token}", token, GITLEAKS)
    token = "sk_ubb4yN3mzqGR2x8#P7r5&@*xC$utE"
    add(
        "freemius-secret-key",
        f'$config = array(\n    "secret_key" => "{token}",\n);',
        token,
        GITLEAKS,
    )
    # gitleaks' hashicorp-tf-password example (that rule is left out: gitleaks_rules.toml).
    add(
        "password-assignment",
        'administrator_login_password = "thisIsDog11"',
        "thisIsDog11",
        GITLEAKS,
    )
    header = b64('{"alg":"HS256","typ":"JWT"}').rstrip("=")
    claims = b64('{"sub":"1234567890","name":"John Doe","iat":1516239022}').rstrip("=")
    token = b64(f"{header}.{claims}.{draw(43, ALNUM + '-_')}")
    add("jwt-base64", f"token: {token}", token, GITLEAKS)
    yaml = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: heketi-secret\ndata:\n  key: "
    add("kubernetes-secret-yaml", yaml + "bXlwYXNzd29yZA==", "bXlwYXNzd29yZA==", GITLEAKS)
    nuget = '<add key="ClearTextPassword" value="TestSource-Password" />'
    add("nuget-config-password", nuget, "TestSource-Password", GITLEAKS)
    token = draw(8, string.digits) + ":A" + draw(34, LOWER + "_-")
    add("telegram-bot-api-token", f"TELEGRAM_API_TOKEN = {token}", token, GITLEAKS)


def more_rules() -> None:
    """redact/data/more_rules.toml: the providers' documented shapes, in a sentence."""
    tokens = {
        "groq-api-key": "gsk_" + draw(52),
        "replicate-api-token": "r8_" + draw(37),
        "langsmith-api-key": f"lsv2_pt_{draw(32, HEX)}_{draw(10, HEX)}",
        "pinecone-api-key": f"pcsk_{draw(5)}_{draw(60)}",
        "xai-api-key": "xai-" + draw(80),
        "tavily-api-key": "tvly-" + draw(32),
        "elevenlabs-api-key": "sk_" + draw(48, HEX),
        "google-oauth-client-secret": "GOCSPX-" + draw(28, ALNUM + "_-"),
        "google-oauth-access-token": "ya29." + draw(120, ALNUM + "_-"),
        "stripe-webhook-secret": "whsec_" + draw(32),
        "docker-hub-pat": "dckr_pat_" + draw(27, ALNUM + "_-"),
        "supabase-secret-key": "sbp_" + draw(40, HEX),
        "mailgun-api-key": "key-" + draw(32, HEX),
        "mailchimp-api-key-bare": draw(32, HEX) + "-us21",
        "telegram-bot-token-bare": draw(10, string.digits) + ":AA" + draw(33, ALNUM + "_-"),
    }
    for rule, token in tokens.items():
        add(rule, f"The agent called the API with {token}.", token)
    token = draw(68, ALNUM + "_-")
    add(
        "discord-webhook-url",
        f"POST https://discord.com/api/webhooks/1234567890123456789/{token}",
        token,
    )
    token = draw(43) + "%3D"
    url = "https://acct.blob.core.windows.net/c/report.pdf?sv=2022-11-02&sp=r&sig="
    add("url-signature", url + token, token)


def issue_28() -> None:
    """The shapes issue 28 found leaking: in a task's objective, a sentence, a config line."""
    token = "rk_live_" + draw(24)
    add("stripe-access-token", f"Refund the order with the restricted key {token}.", token, ISSUE)
    token = f"rk_test_{ALPHABET}0123"
    add("stripe-access-token", token, token, ISSUE)
    token = "pscale_pw_" + draw(43, ALNUM + "_-")
    add("planetscale-password", f"Connect with {token}, then migrate.", token, ISSUE)
    token = "pscale_tkn_" + draw(43, ALNUM + "_-")
    add("planetscale-api-token", f"PLANETSCALE_TOKEN={token}", token, ISSUE)
    token = "pscale_oauth_" + draw(43, ALNUM + "_-")
    add("planetscale-oauth-token", f"({token})", token, ISSUE)
    token = "npm_" + draw(36)
    add("npm-access-token", f"Publish with {token}.", token, ISSUE)
    token = f"npm_{ALPHABET}0123456789"
    add("npm-access-token", f"//registry.npmjs.org/:_authToken={token}", token, ISSUE)
    token = "AIza" + draw(35, ALNUM + "_-")
    add("gcp-api-key", f"Find cafes near Lisbon using {token}.", token, ISSUE)
    token = f"AIzaSy{ALPHABET}1234567"
    add("gcp-api-key", f"key={token}", token, ISSUE)
    encoded = b64("sk-" + draw(48))
    add("encoded-secret", f"OPENAI_KEY_B64={encoded}", encoded, ISSUE)
    blob = json.dumps({"api_key": draw(32)}).encode()
    encoded = base64.urlsafe_b64encode(blob).decode()
    add("encoded-secret", f"config blob {encoded} attached", encoded, ISSUE)
    encoded = b64("ci:npm_" + draw(36))
    add("basic-auth", f"-H 'Authorization: Basic {encoded}'", encoded, ISSUE)
    for sample in (
        "x-api-key: {}",
        "API key: {}",
        '"clientSecret": "{}"',
        "auth_key={}",
        "credentials: {}",
        "DB_PASSWORD='{}'",
        "secret_token = {}",
        "session_id={}",
    ):
        add("password-assignment", sample.format(ALPHABET), ALPHABET, ISSUE)


def cut_keys() -> None:
    """A PEM private key without its END line: cut at a converter's length limit, or by head."""
    body = "\n".join(draw(64, ALNUM + "+/") for _ in range(6))
    key = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}"
    add("private-key-unterminated", f"$ head -7 ~/.ssh/id_ed25519\n{key[:400]}…", body[:300])


def leak_hunt() -> None:
    """What the leak hunt after issue 28 found missed: a session in a Cookie header."""
    session = draw(32, HEX)
    add("cookie-header", f"curl -H 'Cookie: session={session}' https://shop.example.com", session)
    session = draw(24, ALNUM + "-_")
    add("cookie-header", f"Set-Cookie: sid={session}; Path=/; HttpOnly; Secure", session)


def second_leak_hunt() -> None:
    """What the second leak hunt found missed: a secret as a command's option, an Authorization
    header of another scheme, and a name and value in JSON kept escaped inside a text."""
    password = draw(16) + "7"
    add("option-secret", f"docker login -u ci --password {password} registry.corp", password)
    token = "hvs." + draw(24)
    add("option-secret", f'vault login --token "{token}" -address=https://vault.corp', token)
    token = draw(40, HEX)
    add("authorization-header", f"curl -H 'Authorization: token {token}' {API}", token)
    token = draw(24) + "9"
    add("authorization-header", f'{{"headers": "{{\\"Authorization\\": \\"{token}\\"}}"}}', token)
    token = draw(20) + "3"
    body = f'{{\\"access_token\\": \\"{token}\\", \\"expires_in\\": 3600}}'
    add("password-assignment", f'Lambda returned: {{"statusCode": 200, "body": "{body}"}}', token)
    secret = draw(40, ALNUM + "/+")
    add("option-secret", f"aws configure set aws_secret_access_key {secret}", secret)


def third_leak_hunt() -> None:
    """What the third leak hunt found missed: a query percent-encoded in a logged URL, a
    password as a command's short option, a key named in detect-secrets' other forms, and an
    object under a secret's name in a text."""
    key = "sk-proj-" + draw(48, ALNUM + "-_")
    callback = f"https%3A%2F%2Fapi.example.com%2Fv1%3Fapi_key%3D{key}%26page%3D2"
    add("openai-key", f"GET /oauth/start?redirect={callback} HTTP/1.1", key)
    token = draw(24) + "5"
    add("password-assignment", f"302 Location: /login?next=%2Fauth%253Ftoken%253D{token}", token)
    password = draw(12) + "4"
    add("command-password-option", f"mysql -uroot -p{password} -h db.internal orders", password)
    add("command-password-option", f"sshpass -p '{password}' ssh deploy@build-3", password)
    add("command-password-option", f"docker login -u ci -p {password} registry.corp", password)
    add("command-password-option", f"redis-cli -h cache -a {password} PING", password)
    add("command-password-option", f"openssl pkcs12 -export -passout pass:{password}", password)
    secret = draw(32, HEX)
    headers = f'{{"headers": {{"Ocp-Apim-Subscription-Key": "{secret}"}}}}'
    add("password-assignment", headers, secret)
    add("password-assignment", f'DB_PASS="{password}" ./migrate.sh', password)
    add("password-assignment", f"{{'appKey': '{password}', 'region': 'eu'}}", password)
    add("secret-object", f'payload={{"api_key": {{"prod": "{secret}", "ttl": 3600}}}}', secret)
    add("secret-object", f"{{'credentials': {{'user': 'ci', 'value': '{password}'}}}}", password)


def main() -> None:
    ours()
    gitleaks()
    more_rules()
    issue_28()
    cut_keys()
    leak_hunt()
    second_leak_hunt()
    third_leak_hunt()
    for row in ROWS:
        print(json.dumps(row, ensure_ascii=False))


if __name__ == "__main__":
    main()
