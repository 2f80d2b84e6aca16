"""Errors as the API server returns them: a metav1.Status body.

The constructors follow k8s.io/apimachinery/pkg/api/errors (NewNotFound,
NewAlreadyExists, NewConflict, NewInvalid, NewBadRequest, NewForbidden,
NewServiceUnavailable, NewMethodNotSupported, …): the same reason, code,
message and details, which kubectl turns into "Error from server (REASON):
MESSAGE".
"""


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None, headers=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def body(self):
        status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                  "message": self.message, "reason": self.reason, "code": self.code}
        if self.details is not None:
            status["details"] = self.details
        return status


def qualified(plural, group):
    return plural + "." + group if group else plural


def not_found(plural, group, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (qualified(plural, group), name),
                    {"name": name, "group": group, "kind": plural} if group else {"name": name, "kind": plural})


def not_found_path():
    # The handler for a path no resource serves (genericapiserver's NotFound).
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def already_exists(plural, group, name):
    d = {"name": name, "kind": plural}
    if group:
        d["group"] = group
    return ApiError(409, "AlreadyExists", '%s "%s" already exists' % (qualified(plural, group), name), d)


def conflict(plural, group, name, why):
    d = {"name": name, "kind": plural}
    if group:
        d["group"] = group
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s'
                    % (qualified(plural, group), name, why), d)


def modified(plural, group, name):
    return conflict(plural, group, name,
                    "the object has been modified; please apply your changes to the latest version and try again")


def invalid(kind, group, name, causes):
    """causes: (field, type, detail) with type a metav1.CauseType such as
    FieldValueRequired or FieldValueInvalid; the message as NewInvalid
    builds it from field.ErrorList."""
    parts = []
    for field, ctype, detail in causes:
        parts.append("%s: %s" % (field, detail) if field else detail)
    if len(parts) == 1:
        msg = '%s "%s" is invalid: %s' % (kind, name, parts[0])
    else:
        msg = '%s "%s" is invalid: [%s]' % (kind, name, ", ".join(parts))
    d = {"name": name, "kind": kind,
         "causes": [{"reason": t, "message": m, "field": f} for f, t, m in causes]}
    if group:
        d["group"] = group
    return ApiError(422, "Invalid", msg, d)


def bad_request(message):
    return ApiError(400, "BadRequest", message)


def forbidden(plural, group, name, why):
    d = {"name": name, "kind": plural}
    if group:
        d["group"] = group
    return ApiError(403, "Forbidden", '%s "%s" is forbidden: %s' % (qualified(plural, group), name, why), d)


def unauthorized():
    return ApiError(401, "Unauthorized", "Unauthorized")


def unavailable(message):
    return ApiError(503, "ServiceUnavailable", message)


def gone(message):
    return ApiError(410, "Expired", message)


def method_not_supported(plural, group, verb):
    return ApiError(405, "MethodNotAllowed", "%s is not supported on resources of kind %s"
                    % (verb, '"%s"' % qualified(plural, group)), {"group": group, "kind": plural})


def unsupported_media(accepted):
    return ApiError(415, "UnsupportedMediaType",
                    "the body of the request was in an unknown format - accepted media types include: "
                    + ", ".join(accepted))


def not_acceptable(accepted):
    return ApiError(406, "NotAcceptable", "only the following media types are accepted: " + ", ".join(accepted))


def internal(message):
    return ApiError(500, "InternalError", "Internal error occurred: " + message,
                    {"causes": [{"message": message}]})
