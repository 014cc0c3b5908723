package rest

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab/events"
)

// subscriptionRoutes are the event subscriptions' routes beside their kind's standard
// operation set (served from the registry at /api/v1/events/subscriptions): the
// destination test.
func (s *server) subscriptionRoutes() []route {
	str := obj{"type": "string"}
	destination := obj{"type": "object", "required": []any{"type", "config"}, "properties": obj{
		"type":    obj{"type": "string", "enum": []any{"Webhook", "Email"}},
		"timeout": obj{"type": "integer", "minimum": 1, "maximum": 60, "description": "Seconds the test may take (default 10)."},
		"config": obj{"type": "object", "properties": obj{
			"endpoint":  obj{"type": "string", "description": "Webhook: the http(s) URL."},
			"secretKey": obj{"type": "string", "format": "password", "description": "Webhook: the HMAC-SHA256 key of the X-OM-Signature header."},
			"headers":   obj{"type": "object", "additionalProperties": str, "maxProperties": 20},
			"receivers": obj{"type": "array", "items": str, "maxItems": 50, "description": "Email: the receivers."},
		}},
	}}
	request := obj{"type": "object", "required": []any{"destinations"}, "properties": obj{
		"alertName":    obj{"type": "string", "description": "Named in the test message."},
		"destinations": obj{"type": "array", "minItems": 1, "maxItems": events.MaxTestDestinations, "items": destination},
	}}
	result := obj{"type": "object", "required": []any{"type", "status", "latencyMs"}, "properties": obj{
		"type":       str,
		"endpoint":   str,
		"receivers":  obj{"type": "array", "items": str},
		"status":     obj{"type": "string", "enum": []any{"Success", "Failed"}},
		"statusCode": obj{"type": "integer", "description": "The receiver's HTTP status (webhooks)."},
		"latencyMs":  obj{"type": "integer", "description": "How long the attempt took."},
		"error":      obj{"type": "string", "description": "Why it failed."},
	}}
	failed := obj{"type": "object", "properties": obj{
		"failingSubscriptionId": schemaRef("uuid"),
		"changeEvent":           obj{"type": "object", "description": "The change event, its entity's secrets masked."},
		"reason":                obj{"type": "string", "description": "The last error."},
		"timestamp":             obj{"type": "integer", "format": "int64", "description": "When it was given up (epoch milliseconds)."},
	}}
	return []route{{method: http.MethodGet, path: apiPrefix + "/v1/events/subscriptions/{id}/failedEvents",
		handler: s.h(s.failedEvents), id: "listEventSubscriptionFailedEvents", tag: meridian.KindEventSubscription,
		summary: "List the events a subscription gave up",
		description: "Admins only. Newest first; the newest " + strconv.Itoa(events.MaxFailedEvents) + " are kept per subscription. " +
			"An event is given up after the retry horizon, or at once when retrying cannot help.",
		params: []any{pathParamSpec("id", "The subscription's id.", schemaRef("uuid")),
			queryParam("limit", "Most events answered.", obj{"type": "integer", "minimum": 1, "maximum": events.MaxFailedLimit, "default": events.DefaultFailedLimit})},
		responses: responses(obj{"200": resp("The failed events.",
			obj{"type": "object", "properties": obj{"data": obj{"type": "array", "items": failed}}})}, 400, 403, 404)},
		{method: http.MethodPost, path: apiPrefix + "/v1/events/subscriptions/testDestination",
			handler: s.h(s.testDestination), id: "testEventSubscriptionDestination", tag: meridian.KindEventSubscription,
			summary: "Send a test message to alert destinations",
			description: "Admins only. Sends a test message to each destination at once (no retry) and answers, per destination, " +
				"the HTTP status, the latency and the error. Webhooks reach only public addresses unless the server allows more " +
				"networks (--webhook-allowed-networks); redirects are not followed.",
			body: jsonBody("The destinations to test.", request, true),
			responses: responses(obj{"200": resp("One result per destination, in order.",
				obj{"type": "object", "properties": obj{"data": obj{"type": "array", "items": result}}})}, 400, 403)}}
}

func (s *server) testDestination(w http.ResponseWriter, r *http.Request) error {
	if s.events == nil {
		return meridian.Errorf(meridian.ENotFound, "event subscriptions are not configured")
	}
	b, err := readBody(r)
	if err != nil {
		return err
	}
	v, err := decodeJSON(b)
	if err != nil {
		return err
	}
	if _, ok := v.(map[string]any); !ok {
		return invalid("Invalid request format: the body must be a JSON object")
	}
	var req events.TestRequest
	if err := json.Unmarshal(b, &req); err != nil {
		return invalid("Invalid request format: %s", jsonProblem(err))
	}
	res, err := s.events.TestDestination(r.Context(), principal(r), req)
	return respond(w, http.StatusOK, map[string]any{"data": res}, err)
}

func (s *server) failedEvents(w http.ResponseWriter, r *http.Request) error {
	if s.events == nil {
		return meridian.Errorf(meridian.ENotFound, "event subscriptions are not configured")
	}
	id, err := uuidParam(r, "id")
	if err != nil {
		return err
	}
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil {
			return invalid("[query param limit must be a number]")
		}
		if limit < 1 {
			return invalid("[query param limit must be between 1 and %d]", events.MaxFailedLimit)
		}
	}
	res, err := s.events.FailedEvents(r.Context(), principal(r), id, limit)
	return respond(w, http.StatusOK, map[string]any{"data": res}, err)
}
