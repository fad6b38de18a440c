# vramdoc watch --serve --web-config: TLS and basic auth (the Prometheus exporter-toolkit format)
# against curl, with a self-signed certificate made here by openssl; mutual TLS; bad configs get
# exit 2 with the line. docs/security.md.
source "$(dirname "$0")/../cli_lib.sh"
for tool in openssl curl; do
  command -v $tool >/dev/null || { echo "$tool not installed (scripts/deps.sh --test installs it): skipped"; exit 77; }
done
"$VRAMDOC" watch --serve 127.0.0.1:0 --web-config /dev/null --duration 1ms 2>&1 | grep -q "built without TLS" &&
  { echo "this vramdoc was built without TLS (no OpenSSL 3 headers): skipped"; exit 77; }
dir=$(mktemp -d)
export VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 FAKE_NVML_CONFIG=$dir/fake.conf
printf 'devices=1\nprocesses=%s:1073741824\n' $$ >"$dir/fake.conf"
server=
trap 'kill $server 2>/dev/null; rm -rf "$dir" "$out" "$err"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cd "$dir"

# A CA, a server certificate for 127.0.0.1 signed by it, and a client certificate.
quiet() { "$@" >/dev/null 2>&1 || fail "openssl: $*"; }
quiet openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -keyout ca.key -out ca.crt -subj /CN=test-ca
quiet openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1
printf 'subjectAltName=IP:127.0.0.1\n' >san.ext
quiet openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out server.crt -extfile san.ext
quiet openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout client.key -out client.csr -subj /CN=prometheus
quiet openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out client.crt
chmod 600 server.key client.key
# The password "U*U" and its bcrypt hash: OpenBSD's test vector (cost 5).
hash='$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'

# serve CONFIG: starts the exporter with it on a free port of 127.0.0.1; sets $url.
serve() {
  kill $server 2>/dev/null; wait $server 2>/dev/null
  : >"$dir/serve.err"  # emptied here: the new server truncates it only once it starts, and the wait below would read the last one's port
  "$VRAMDOC" watch --serve 127.0.0.1:0 --interval 100ms --web-config "$1" 2>"$dir/serve.err" & server=$!
  for _ in $(seq 50); do grep -q "serving https\?://" "$dir/serve.err" && break; sleep 0.1; done
  port=$(sed -n 's|.*serving https\?://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$dir/serve.err")
  [[ -n $port ]] || { fail "no port announced for $1"; cat "$dir/serve.err"; }
  url=https://127.0.0.1:$port
}
code() { curl -s -o "$dir/body" -D "$dir/headers" -w '%{http_code}' --max-time 10 "$@"; }

cat >web.yml <<YML
# TLS and basic auth, the toolkit's format
tls_server_config:
  cert_file: server.crt
  key_file: server.key
basic_auth_users:
  prometheus: $hash
YML
serve web.yml
contains "announces https with basic auth" "$dir/serve.err" "serving https://127.0.0.1:$port/metrics with basic auth"
[[ $(code --cacert ca.crt -u prometheus:U*U "$url/metrics") == 200 ]] || fail "the right password: $(cat "$dir/headers")"
contains "metrics over TLS" "$dir/body" '^vramdoc_gpu_up{gpu="0"'
[[ $(code --cacert ca.crt -u prometheus:U*U "$url/metrics") == 200 ]] || fail "the right password again (remembered)"
[[ $(code --cacert ca.crt "$url/metrics") == 401 ]] || fail "no credentials: not 401"
contains "WWW-Authenticate" "$dir/headers" 'WWW-Authenticate: Basic realm="vramdoc", charset="UTF-8"'
grep -q vramdoc_gpu "$dir/body" && fail "metrics answered without credentials"
sleep 0.2  # past the share of time bcrypt may take after the last check
[[ $(code --cacert ca.crt -u prometheus:wrong "$url/metrics") == 401 ]] || fail "a wrong password: not 401"
sleep 0.2
[[ $(code --cacert ca.crt -u nobody:U*U "$url/metrics") == 401 ]] || fail "an unknown user: not 401"
[[ $(code --cacert ca.crt -u prometheus:wrong "$url/metrics") =~ ^(401|429)$ ]] || fail "guessing again: neither 401 nor 429"
[[ $(code --cacert ca.crt -u prometheus:U*U "$url/metrics") == 200 ]] || fail "a known password while someone guesses: not 200"
code --cacert ca.crt -u prometheus:U*U "http://127.0.0.1:$port/metrics" >/dev/null && fail "plain HTTP answered on the TLS port"
code -u prometheus:U*U "$url/metrics" >/dev/null && fail "curl trusted a certificate it cannot verify"
code --cacert ca.crt --tls-max 1.1 -u prometheus:U*U "$url/metrics" >/dev/null && fail "TLS 1.1 accepted"
# The server stays bounded: a client that opens TLS and says nothing does not hold it.
exec 5<>/dev/tcp/127.0.0.1/$port
[[ $(code --cacert ca.crt -u prometheus:U*U "$url/metrics") == 200 ]] || fail "a scrape beside a silent client"
exec 5<&-

# Mutual TLS: only a client with a certificate from the CA gets through the handshake.
cat >mtls.yml <<YML
tls_server_config:
  cert_file: $dir/server.crt
  key_file: $dir/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
  min_version: TLS13
YML
serve mtls.yml
[[ $(code --cacert ca.crt --cert client.crt --key client.key "$url/metrics") == 200 ]] || fail "mTLS with the client certificate"
code --cacert ca.crt "$url/metrics" >/dev/null && fail "mTLS without a client certificate got through"
code --cacert ca.crt --cert server.crt --key server.key --tls-max 1.2 "$url/metrics" >/dev/null && fail "TLS 1.2 under min_version TLS13"
kill -TERM $server; wait $server; rc=$?
[[ $rc == 0 ]] || fail "SIGTERM exit $rc, wanted 0"
server=

# Bad configurations: exit 2 before serving, saying what is wrong.
printf 'basic_auth_users:\n  prometheus: U*U\n' >plain.yml
check "a password in clear" 2 "$VRAMDOC" watch --serve 127.0.0.1:0 --web-config plain.yml
contains "says bcrypt" $err "line 2: the password of 'prometheus' must be a bcrypt hash"
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: client.key\n' >mismatch.yml
check "a key of another certificate" 2 "$VRAMDOC" watch --serve 127.0.0.1:0 --web-config mismatch.yml
contains "says it" $err "key values mismatch\\|does not belong to the certificate"
printf 'tls_server_config:\n  cert_file: missing.crt\n  key_file: server.key\n' >missing.yml
check "a missing certificate" 2 "$VRAMDOC" watch --serve 127.0.0.1:0 --web-config missing.yml
contains "names it" $err "tls_server_config.cert_file: cannot read $dir/missing.crt: No such file or directory"
# A key or certificate that is a FIFO hung start-up (OpenSSL waited for a writer); /dev/zero read on.
mkfifo fifo.key
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: fifo.key\n' >fifo.yml
check "a FIFO as the key (it hung)" 2 timeout -k 5 20 "$VRAMDOC" watch --serve 127.0.0.1:0 --web-config fifo.yml
contains "names the setting and what it is" $err "tls_server_config.key_file: $dir/fifo.key is a FIFO (named pipe), not a file vramdoc can read"
printf 'tls_server_config:\n  cert_file: /dev/zero\n  key_file: server.key\n' >zero.yml
check "/dev/zero as the certificate" 2 timeout -k 5 20 "$VRAMDOC" watch --serve 127.0.0.1:0 --web-config zero.yml
contains "a character device" $err "tls_server_config.cert_file: /dev/zero is a character device"
# bcrypt cost 31: start-up hashed a dummy at that cost (days; SIGTERM ignored meanwhile).
printf 'basic_auth_users:\n  prometheus: $2b$31$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW\n' >cost31.yml
check "bcrypt cost 31 (it hung)" 2 timeout -k 5 20 "$VRAMDOC" watch --serve 127.0.0.1:0 --web-config cost31.yml
contains "says the bound" $err "line 2: the bcrypt hash of 'prometheus' has cost 31: at most 14 is accepted"
# A byte-order mark (Notepad writes one) made "unknown key basic_auth_users", the difference invisible.
printf '\xef\xbb\xbfbasic_auth_users:\n  prometheus: %s\n' "$hash" >bom.yml
"$VRAMDOC" watch --serve 127.0.0.1:0 --web-config bom.yml --duration 300ms >/dev/null 2>"$err" || fail "a web config with a byte-order mark: $(cat "$err")"
contains "served with basic auth" $err "with basic auth"
check "no such file" 2 "$VRAMDOC" watch --serve 127.0.0.1:0 --web-config nope.yml
check "--web-config without --serve" 2 "$VRAMDOC" watch --once --web-config web.yml
VRAMDOC_LIBSSL=/nonexistent/libssl.so.3 check "no OpenSSL at run time" 2 "$VRAMDOC" watch --serve 127.0.0.1:0 --web-config web.yml
contains "says what to install" $err "cannot load OpenSSL 3"
finish
