package httpapi

import (
	"bytes"
	_ "embed"
	"net/http"
	"strconv"
)

// openAPIPath is the path, under BasePath, of the API's OpenAPI document.
const openAPIPath = "/openapi.json"

// openAPI is the document OpenAPI returns.
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns a copy of the OpenAPI 3.1 document of the API the
// Handler serves, as JSON: every route, header, request field and
// response. The Handler serves it at GET BasePath+"/openapi.json" without
// an API key; a test keeps it in step with the routes and the request
// fields the Handler decodes.
func OpenAPI() []byte { return bytes.Clone(openAPI) }

// routeOpenAPI registers GET BasePath+"/openapi.json", which needs no API
// key, and the JSON 405 for its other methods.
func (h *Handler) routeOpenAPI(mux *http.ServeMux) {
	mux.HandleFunc("GET "+BasePath+openAPIPath, serveOpenAPI)
	mux.Handle(BasePath+openAPIPath, methodNotAllowed("GET, HEAD"))
}

// serveOpenAPI answers the OpenAPI document.
func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(openAPI)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(openAPI)
	}
}
