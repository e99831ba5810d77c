#!/usr/bin/env bash
# Makes a private CA and a controller certificate for preflight's optional TLS between agents and
# controller (docs/security.md). For a test bed or a first deployment; a site with its own PKI
# issues the controller certificate there instead.
#   scripts/tls_make_ca.sh DIR SAN [SAN...]     SAN: IP:<address> or DNS:<name>
#   e.g. scripts/tls_make_ca.sh /etc/preflight/tls IP:10.0.0.5 DNS:preflight-controller
# Writes DIR/ca.pem (give to every agent node), DIR/ca.key (keep it off the cluster),
# DIR/controller.pem and DIR/controller.key (the controller's; mode 600). Never overwrites.
# With CA=path/ca.pem CA_KEY=path/ca.key it signs with an existing CA instead of making one.
set -euo pipefail
if [[ $# -lt 2 ]]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
dir=$1
shift
for san in "$@"; do
  if [[ ! $san =~ ^(IP:[0-9A-Fa-f.:]+|DNS:[A-Za-z0-9*]([A-Za-z0-9.-]*[A-Za-z0-9])?)$ ]]; then
    echo "tls_make_ca.sh: '$san' is not IP:<address> or DNS:<name>" >&2
    exit 2
  fi
done
sans=$(IFS=,; echo "$*")
mkdir -p "$dir"
umask 077
ca=${CA:-$dir/ca.pem}
ca_key=${CA_KEY:-$dir/ca.key}
for f in "$dir/controller.pem" "$dir/controller.key"; do
  if [[ -e $f ]]; then
    echo "tls_make_ca.sh: $f exists; not overwriting" >&2
    exit 1
  fi
done
if [[ -z ${CA:-} ]]; then
  if [[ -e $ca || -e $ca_key ]]; then
    echo "tls_make_ca.sh: $ca or $ca_key exists; not overwriting (set CA and CA_KEY to reuse)" >&2
    exit 1
  fi
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1825 \
    -subj "/CN=preflight CA" -keyout "$ca_key" -out "$ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    2>/dev/null
  chmod 644 "$ca"
fi
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=preflight controller" \
  -keyout "$dir/controller.key" -out "$dir/controller.csr" 2>/dev/null
openssl x509 -req -in "$dir/controller.csr" -CA "$ca" -CAkey "$ca_key" -CAcreateserial \
  -CAserial "$dir/ca.srl" -days 397 -out "$dir/controller.pem" 2>/dev/null \
  -extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n' "$sans")
rm -f "$dir/controller.csr"
echo "controller certificate for $sans: $dir/controller.pem (key $dir/controller.key), CA $ca"
