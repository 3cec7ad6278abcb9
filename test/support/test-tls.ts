// Generated with openssl on 2026-11-28 for tests only (a CA and a localhost/127.0.0.1 certificate it signed, valid 100 years); never trusted outside tests.
/** A test certificate authority and a server certificate for `localhost` and `127.0.0.1` that it signed: a local https server the fetcher trusts only when given `testCaCertificate`. */

/** The test CA's certificate (PEM). */
export const testCaCertificate = `-----BEGIN CERTIFICATE-----
MIIBkjCCATmgAwIBAgIUUA4+Gq2scnNT2ozi7anVEzvlU9EwCgYIKoZIzj0EAwIw
FjEUMBIGA1UEAwwLc3ZjIHRlc3QgQ0EwIBcNMjYxMTI4MDkyMTQ2WhgPMjEyNjEx
MDQwOTIxNDZaMBYxFDASBgNVBAMMC3N2YyB0ZXN0IENBMFkwEwYHKoZIzj0CAQYI
KoZIzj0DAQcDQgAE/DsTkr2LpW3g34qHfVx/g7ufNr4eF/SOJ4z8bc0lbAdjBxwE
yosSattekPDLoPms7C5UzpMOP9Fd4ACrZuFzQKNjMGEwHQYDVR0OBBYEFCWX6jFb
XLd8JI3u/wnQgOxZcXNRMB8GA1UdIwQYMBaAFCWX6jFbXLd8JI3u/wnQgOxZcXNR
MA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgIEMAoGCCqGSM49BAMCA0cA
MEQCIBkD5lAS7jgPtxXhGM8MVmpwtPNO3sEXr1lL+bhBVscEAiATV+HeY/VwBu8I
r63NwSpxDZ2fVIjjXUwrtJA0LRXPsA==
-----END CERTIFICATE-----
`

/** The server certificate for localhost and 127.0.0.1 (PEM). */
export const testServerCertificate = `-----BEGIN CERTIFICATE-----
MIIBrDCCAVKgAwIBAgIUXAVAZWD1nFapi+rOUgdbADUXW8wwCgYIKoZIzj0EAwIw
FjEUMBIGA1UEAwwLc3ZjIHRlc3QgQ0EwIBcNMjYxMTI4MDkyMTQ2WhgPMjEyNjEx
MDQwOTIxNDZaMBQxEjAQBgNVBAMMCWxvY2FsaG9zdDBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABC6UDKFgPgBRwUXIpa5bgzEEh5t5WH6UZoTXPRy4T1QS2ENLhIxD
xeCZbiIK7Hhzyjp8OtclJky5+nUSQ3wVEhqjfjB8MBoGA1UdEQQTMBGCCWxvY2Fs
aG9zdIcEfwAAATAJBgNVHRMEAjAAMBMGA1UdJQQMMAoGCCsGAQUFBwMBMB0GA1Ud
DgQWBBT3k0fItxyY9tpdYjJOCT6sY82KBTAfBgNVHSMEGDAWgBQll+oxW1y3fCSN
7v8J0IDsWXFzUTAKBggqhkjOPQQDAgNIADBFAiEAlHKemdfgZIO40Qo1Nl4s7jr+
xdjJpiE53eosPC15hZMCIGK1QRY1OTLMamF8dP0L6anwf66axAZDZHiz2jWCHf0L
-----END CERTIFICATE-----
`

/** The server certificate's private key (PEM). */
export const testServerKey = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgAojR/BFIcAJRGUXf
VTVFDfyLIEP85TbWTZB95rKZEfWhRANCAAQulAyhYD4AUcFFyKWuW4MxBIebeVh+
lGaE1z0cuE9UEthDS4SMQ8XgmW4iCux4c8o6fDrXJSZMufp1EkN8FRIa
-----END PRIVATE KEY-----
`
