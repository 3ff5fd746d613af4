package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	"github.com/gin-gonic/gin"

	"github.com/sparkplug-io/sparkplug/plugin/edge"
	"github.com/sparkplug-io/sparkplug/plugin/execute"
	"github.com/sparkplug-io/sparkplug/plugin/metrics"
	"github.com/sparkplug-io/sparkplug/plugin/redact"
)

// Executor is the request core.
type Executor interface {
	Execute(ctx context.Context, args executor.ExecuteTemplateArgs) (executor.ExecuteTemplateReply, error)
}

// Readiness reports whether the process can serve (its Kubernetes client
// reached the API server).
type Readiness interface {
	Ready() error
}

// Token reads the bearer token the agent sends, from the file Argo mounts.
type Token interface {
	Matches(bearer string) (bool, error)
}

// New builds the engine: gin.New with only the middleware chosen here.
// m may be nil (no metrics); when set, /metrics serves them.
func New(core Executor, token Token, ready Readiness, m *metrics.Metrics, log *slog.Logger) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.Use(recovery(log), requestLog(log, m))
	if m != nil {
		e.GET("/metrics", gin.WrapH(m.Handler()))
	}
	h := &handler{core: core, token: token, log: log}
	e.POST(edge.ExecutePath, h.execute)
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
	core  Executor
	token Token
	log   *slog.Logger
}

func (h *handler) execute(c *gin.Context) {
	bearer, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
	match, err := h.token.Matches(bearer)
	if err != nil {
		h.log.Error("cannot read the plugin token", "error", err.Error())
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "the plugin cannot read its token file"})
		return
	}
	if !ok || !match {
		c.JSON(http.StatusForbidden, gin.H{"error": "invalid or missing bearer token"})
		return
	}
	var args executor.ExecuteTemplateArgs
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, edge.MaxBodyBytes))
	if err := dec.Decode(&args); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			c.JSON(http.StatusRequestEntityTooLarge, gin.H{"error": fmt.Sprintf("request body over %d bytes", tooLarge.Limit)})
			return
		}
		c.JSON(http.StatusBadRequest, gin.H{"error": redact.Value(fmt.Sprintf("request body is not a template.execute request: %s", err))})
		return
	}
	reply, err := h.core.Execute(c.Request.Context(), args)
	switch {
	case errors.Is(err, execute.ErrBadRequest):
		c.JSON(http.StatusBadRequest, gin.H{"error": redact.Value(err.Error())})
	case err != nil:
		h.log.Info("answering 503; the agent retries", "error", err.Error())
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": redact.Value(err.Error())})
	default:
		if reply.Node != nil {
			c.Set(phaseKey, string(reply.Node.Phase))
		}
		c.JSON(http.StatusOK, reply)
	}
}

// phaseKey carries the replied node phase to the request log and metrics.
const phaseKey = "sparkplug.phase"

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
		c.Next()
		if c.FullPath() == edge.ExecutePath {
			m.Request(strconv.Itoa(c.Writer.Status()), c.GetString(phaseKey), time.Since(start))
		}
		level := slog.LevelDebug
		if c.Writer.Status() >= 400 {
			level = slog.LevelInfo
		}
		log.Log(c.Request.Context(), level, "request", "method", c.Request.Method, "path", c.Request.URL.Path,
			"status", c.Writer.Status(), "duration", time.Since(start).String())
	}
}
