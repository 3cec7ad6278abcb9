// msgpackr loads `msgpackr-extract` optionally and falls back to JavaScript when it exports nothing.
module.exports = null
