/** The SDK's version, sent in `User-Agent`. */
export const sdkVersion = "0.1.0"
