package cli

// WriteJSON is writeJSON for the external tests (cli_test).
var WriteJSON = writeJSON
