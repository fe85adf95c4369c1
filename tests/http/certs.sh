#!/bin/sh
# certs.sh DIR: two test CAs (ca-a, ca-b) and a server certificate for IP
# 127.0.0.1 and the name jig-test.example from each (srv-a, srv-b), as
# DIR/NAME.pem and DIR/NAME.key.
set -eu
d=$1
for ca in a b; do
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=jig test CA $ca" \
		-keyout "$d/ca-$ca.key" -out "$d/ca-$ca.pem" 2>/dev/null
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
		-keyout "$d/srv-$ca.key" -out "$d/srv-$ca.csr" 2>/dev/null
	printf 'subjectAltName=IP:127.0.0.1,DNS:jig-test.example\nbasicConstraints=CA:FALSE\n' >"$d/ext"
	openssl x509 -req -in "$d/srv-$ca.csr" -CA "$d/ca-$ca.pem" -CAkey "$d/ca-$ca.key" -CAcreateserial \
		-days 2 -extfile "$d/ext" -out "$d/srv-$ca.pem" 2>/dev/null
done
chmod 644 "$d"/*.pem "$d"/*.key
