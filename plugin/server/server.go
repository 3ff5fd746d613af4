package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	"github.com/gin-gonic/gin"

	"github.com/sparkplug-io/sparkplug/plugin/edge"
	"github.com/sparkplug-io/sparkplug/plugin/metrics"
	"github.com/sparkplug-io/sparkplug/plugin/redact"
	"github.com/sparkplug-io/sparkplug/plugin/request"
)

// Executor answers the requests (request.Answerer).
type Executor interface {
	Execute(ctx context.Context, args executor.ExecuteTemplateArgs) (executor.ExecuteTemplateReply, error)
}

// Readiness reports whether the process can serve (its Kubernetes client
// reached the API server).
type Readiness interface {
	Ready() error
}

// New builds the engine: gin.New with only the middleware chosen here.
// m may be nil (no metrics); when set, /metrics serves them.
func New(core Executor, token edge.Token, ready Readiness, m *metrics.Metrics, log *slog.Logger) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.Use(recovery(log), requestLog(log, m))
	if m != nil {
		e.GET("/metrics", gin.WrapH(m.Handler()))
	}
	h := &handler{core: core}
	e.POST(edge.ExecutePath, gin.WrapH(&edge.Execute{Token: token, Answer: h.answer, Redact: redact.Value, Log: log}))
	e.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok") })
	e.GET("/readyz", func(c *gin.Context) {
		if err := ready.Ready(); err != nil {
			c.String(http.StatusServiceUnavailable, "not ready: %s", err)
			return
		}
		c.String(http.StatusOK, "ok")
	})
	return e
}

type handler struct {
	core Executor
}

// answer is the sidecar's answer (edge.Execute does the rest): the
// request decoded into Argo's types (request.Decode) and the
// Executor's reply. Its request.ErrBadRequest is answered 400, its
// other errors 503; the phase of the node replied goes to the request log
// and metrics.
func (h *handler) answer(ctx context.Context, body io.Reader) (any, error) {
	args, err := request.Decode(body)
	if err != nil {
		return nil, edge.NotARequest(err)
	}
	reply, err := h.core.Execute(ctx, args)
	switch {
	case errors.Is(err, request.ErrBadRequest):
		return nil, edge.BadRequest(err)
	case err != nil:
		return nil, err
	}
	if p, ok := ctx.Value(phaseKey{}).(*string); ok && reply.Node != nil {
		*p = string(reply.Node.Phase)
	}
	return reply, nil
}

// phaseKey is the request context's key of where answer puts the replied
// node phase, for the request log and metrics (requestLog sets it).
type phaseKey struct{}

// recovery turns a panic into a 500 with a message instead of a dropped
// connection, and logs it. The core is written not to panic; this is the
// net under it.
func recovery(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if v := recover(); v != nil {
				log.Error("panic while serving a request", "path", c.Request.URL.Path, "panic", fmt.Sprint(v))
				c.AbortWithStatusJSON(http.StatusInternalServerError, gin.H{"error": "internal error in the spark plugin; see its log"})
			}
		}()
		c.Next()
	}
}

func requestLog(log *slog.Logger, m *metrics.Metrics) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		var phase string
		c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), phaseKey{}, &phase))
		c.Next()
		if c.FullPath() == edge.ExecutePath {
			m.Request(strconv.Itoa(c.Writer.Status()), phase, time.Since(start))
		}
		level := slog.LevelDebug
		if c.Writer.Status() >= 400 {
			level = slog.LevelInfo
		}
		log.Log(c.Request.Context(), level, "request", "method", c.Request.Method, "path", c.Request.URL.Path,
			"status", c.Writer.Status(), "duration", time.Since(start).String())
	}
}
