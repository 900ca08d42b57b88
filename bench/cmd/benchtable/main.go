// Command benchtable runs every performance comparison of notify in one go
// and prints one table: our figure, the baseline's or the peer's, their
// ratio, the target and whether it is met. Figures are medians of repeated
// runs (-count, default 6), measured side by side in the same run.
//
//	bench/run            # from the repository root; or
//	go run ./cmd/benchtable -count 6   # from bench/
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// figure picks one metric of one benchmark from a run's output.
type figure struct {
	bench string // full name without the -GOMAXPROCS suffix
	unit  string // "ns/op", "MB/s", a ReportMetric unit...
}

// comparison is one row of the table.
type comparison struct {
	what    string
	dir     string // package, relative to the repository root
	pattern string // -bench
	time    string // -benchtime
	ours    figure
	theirs  figure // empty bench: ours alone, against an absolute target
	// lowerIsBetter: ratio = ours/theirs (times, latencies); otherwise
	// ratio = ours/theirs of a rate, where higher is better.
	lowerIsBetter bool
	target        float64 // the ratio to meet (or the absolute figure, when theirs is empty); 0: reported only
	env           []string
}

var comparisons = []comparison{
	{what: "send pipeline vs nikoksr/notify Send (ns/op)", dir: "bench", pattern: "PipelineSendSMS|PeerNikoksrSend", time: "200ms",
		ours: figure{"BenchmarkPipelineSendSMS", "ns/op"}, theirs: figure{"BenchmarkPeerNikoksrSend", "ns/op"}, lowerIsBetter: true, target: 1.0},
	{what: "send pipeline, records in memstore (allocs/op)", dir: "bench", pattern: "PipelineSendSMS", time: "200ms",
		ours: figure{"BenchmarkPipelineSendSMS", "allocs/op"}, lowerIsBetter: true, target: 16},
	{what: "send pipeline vs the same by hand (ns/op)", dir: "bench", pattern: "PipelineSendSMS|HandWrittenSendSMS", time: "200ms",
		ours: figure{"BenchmarkPipelineSendSMS", "ns/op"}, theirs: figure{"BenchmarkHandWrittenSendSMS", "ns/op"}, lowerIsBetter: true, target: 1.5},
	// The ledger's share of that row (bench/ledger_test.go): one send's
	// two ledger writes alone, memstore's against the baseline's maps.
	{what: "the same's two ledger writes alone, memstore vs by hand (ns/op)", dir: "bench", pattern: "LedgerAlone", time: "200ms",
		ours: figure{"BenchmarkLedgerAlone/memstore", "ns/op"}, theirs: figure{"BenchmarkLedgerAlone/hand", "ns/op"}, lowerIsBetter: true},
	{what: "send pipeline with metrics.Observer vs without (ns/op)", dir: "bench", pattern: "PipelineSendSMS", time: "200ms",
		ours: figure{"BenchmarkPipelineSendSMSMetrics", "ns/op"}, theirs: figure{"BenchmarkPipelineSendSMS", "ns/op"}, lowerIsBetter: true, target: 1.25},
	{what: "send pipeline with metrics.Observer (allocs/op)", dir: "bench", pattern: "PipelineSendSMS", time: "200ms",
		ours: figure{"BenchmarkPipelineSendSMSMetrics", "allocs/op"}, lowerIsBetter: true, target: 16},
	{what: "send pipeline with the dev outbox vs without (ns/op)", dir: "bench", pattern: "PipelineSendSMS", time: "200ms",
		ours: figure{"BenchmarkPipelineSendSMSOutbox", "ns/op"}, theirs: figure{"BenchmarkPipelineSendSMS", "ns/op"}, lowerIsBetter: true},
	// Tracing (otelnotify.WithTracerProvider): every row of one run of
	// BenchmarkTracedSendSMS, whose none is the send without the option.
	{what: "traced send, no-op TracerProvider vs untraced (ns/op)", dir: "bench", pattern: "TracedSendSMS", time: "200ms",
		ours: figure{"BenchmarkTracedSendSMS/noop", "ns/op"}, theirs: figure{"BenchmarkTracedSendSMS/none", "ns/op"}, lowerIsBetter: true, target: 1.03},
	{what: "traced send, unrecognised no-op vs untraced (ns/op)", dir: "bench", pattern: "TracedSendSMS", time: "200ms",
		ours: figure{"BenchmarkTracedSendSMS/hidden-noop", "ns/op"}, theirs: figure{"BenchmarkTracedSendSMS/none", "ns/op"}, lowerIsBetter: true},
	{what: "traced send, SDK+batcher+in-memory vs untraced (ns/op)", dir: "bench", pattern: "TracedSendSMS", time: "200ms",
		ours: figure{"BenchmarkTracedSendSMS/sdk-batch", "ns/op"}, theirs: figure{"BenchmarkTracedSendSMS/none", "ns/op"}, lowerIsBetter: true, target: 1.25},
	{what: "traced send to a vendor over loopback HTTP, SDK+batcher+in-memory vs untraced (ns/op)", dir: "bench", pattern: "TracedSendSMSVendor", time: "200ms",
		ours: figure{"BenchmarkTracedSendSMSVendor/sdk-batch", "ns/op"}, theirs: figure{"BenchmarkTracedSendSMSVendor/none", "ns/op"}, lowerIsBetter: true, target: 1.25},
	{what: "traced send, SDK+sync+in-memory vs untraced (ns/op)", dir: "bench", pattern: "TracedSendSMS", time: "200ms",
		ours: figure{"BenchmarkTracedSendSMS/sdk", "ns/op"}, theirs: figure{"BenchmarkTracedSendSMS/none", "ns/op"}, lowerIsBetter: true},
	{what: "traced send's five SDK spans alone vs untraced (ns/op)", dir: "bench", pattern: "TracedSendSMS", time: "200ms",
		ours: figure{"BenchmarkTracedSendSMS/sdk-floor", "ns/op"}, theirs: figure{"BenchmarkTracedSendSMS/none", "ns/op"}, lowerIsBetter: true},
	{what: "request rules (validator/v10) share of a send (ns/op)", dir: "bench", pattern: "PipelineSendSMS|RequestRulesSMS", time: "200ms",
		ours: figure{"BenchmarkRequestRulesSMS", "ns/op"}, theirs: figure{"BenchmarkPipelineSendSMS", "ns/op"}, lowerIsBetter: true, target: 0.15},
	{what: "pgstore debits/s, one account vs bare UPDATE", dir: "pgstore", pattern: "Debit", time: "2000x",
		ours: figure{"BenchmarkDebit/one-account", "store-debits/s"}, theirs: figure{"BenchmarkDebit/one-account", "bare-debits/s"}, target: 0.5},
	{what: "pgstore debits/s, 16 accounts vs bare UPDATE", dir: "pgstore", pattern: "Debit", time: "2000x",
		ours: figure{"BenchmarkDebit/16-accounts", "store-debits/s"}, theirs: figure{"BenchmarkDebit/16-accounts", "bare-debits/s"}, target: 0.5},
	{what: "pgstore sends/s with records vs bare UPDATE+INSERT tx", dir: "pgstore", pattern: "PipelineSend", time: "2000x",
		ours: figure{"BenchmarkPipelineSend/records", "pipeline-sends/s"}, theirs: figure{"BenchmarkPipelineSend/records", "bare-tx/s"}, target: 0.5},
	{what: "pgstore sends/s, accounts read uncached, vs bare tx", dir: "pgstore", pattern: "PipelineSend", time: "2000x",
		ours: figure{"BenchmarkPipelineSend/records-uncached", "pipeline-sends/s"}, theirs: figure{"BenchmarkPipelineSend/records-uncached", "bare-tx/s"}},
	{what: "chat template render vs strings.Replacer (ns/op)", dir: "template", pattern: "Chat|EmailHTML", time: "200ms",
		ours: figure{"BenchmarkChat/Render", "ns/op"}, theirs: figure{"BenchmarkChat/Replacer", "ns/op"}, lowerIsBetter: true, target: 1.5},
	{what: "e-mail HTML render vs html/template (ns/op)", dir: "template", pattern: "Chat|EmailHTML", time: "200ms",
		ours: figure{"BenchmarkEmailHTML/Render", "ns/op"}, theirs: figure{"BenchmarkEmailHTML/HTMLTemplate", "ns/op"}, lowerIsBetter: true, target: 3},
	{what: "SMS segment counting, slowest path (MB/s)", dir: "channel/sms", pattern: "Segments", time: "200ms",
		ours: figure{"BenchmarkSegments/gsm-ext", "MB/s"}, target: 1},
	{what: "SMTP pool (4) vs net/smtp.SendMail per message (msgs/s)", dir: "provider/smtp", pattern: "Throughput", time: "1x",
		ours: figure{"BenchmarkThroughput/provider-pool-4", "msgs/s"}, theirs: figure{"BenchmarkThroughput/net-smtp-SendMail", "msgs/s"}, target: 2},
	{what: "SMTP pool (8) vs net/smtp.SendMail per message (msgs/s)", dir: "provider/smtp", pattern: "Throughput", time: "1x",
		ours: figure{"BenchmarkThroughput/provider-pool-8", "msgs/s"}, theirs: figure{"BenchmarkThroughput/net-smtp-SendMail", "msgs/s"}, target: 2},
	{what: "SMTP pool (4) vs go-simple-mail, new connection each (msgs/s)", dir: "provider/smtp", pattern: "Throughput", time: "1x",
		ours: figure{"BenchmarkThroughput/provider-pool-4", "msgs/s"}, theirs: figure{"BenchmarkThroughput/simple-mail-conn-per-message", "msgs/s"}, target: 2},
	{what: "SMTP pool (4) vs the server's raw limit (msgs/s)", dir: "provider/smtp", pattern: "Throughput", time: "1x",
		ours: figure{"BenchmarkThroughput/provider-pool-4", "msgs/s"}, theirs: figure{"BenchmarkThroughput/raw-limit", "msgs/s"}, target: 0.5},
	{what: "HTTP POST /sms vs bare net/http handler (req/s)", dir: "httpapi", pattern: "SMSvsBare", time: "3000x",
		ours: figure{"BenchmarkSMSvsBare", "api-req/s"}, theirs: figure{"BenchmarkSMSvsBare", "bare-req/s"}, target: 0.7},
	{what: "HTTP POST /sms p50 latency vs bare (µs)", dir: "httpapi", pattern: "SMSvsBare", time: "3000x",
		ours: figure{"BenchmarkSMSvsBare", "api-p50-µs"}, theirs: figure{"BenchmarkSMSvsBare", "bare-p50-µs"}, lowerIsBetter: true},
	{what: "HTTP POST /sms p99 latency vs bare (µs)", dir: "httpapi", pattern: "SMSvsBare", time: "3000x",
		ours: figure{"BenchmarkSMSvsBare", "api-p99-µs"}, theirs: figure{"BenchmarkSMSvsBare", "bare-p99-µs"}, lowerIsBetter: true},
	{what: "bulk SMS to 1,000 vs 1,000 SendSMS: wall time", dir: "provider/smsgateway", pattern: "BulkSMS", time: "5x",
		ours: figure{"BenchmarkBulkSMS/bulk", "ns/op"}, theirs: figure{"BenchmarkBulkSMS/singles", "ns/op"}, lowerIsBetter: true, target: 0.25},
	{what: "bulk SMS to 1,000 vs 1,000 SendSMS: vendor calls", dir: "provider/smsgateway", pattern: "BulkSMS", time: "5x",
		ours: figure{"BenchmarkBulkSMS/bulk", "calls/op"}, theirs: figure{"BenchmarkBulkSMS/singles", "calls/op"}, lowerIsBetter: true, target: 0.001},
	{what: "8 concurrent 16 MiB QR media sends: peak heap (MiB)", dir: "provider/qrchat", pattern: "MediaPeakHeap", time: "3x",
		ours: figure{"BenchmarkMediaPeakHeap/stream", "peak-MiB"}, lowerIsBetter: true, target: 64},
	{what: "QR media peak heap, streamed vs read whole", dir: "provider/qrchat", pattern: "MediaPeakHeap", time: "3x",
		ours: figure{"BenchmarkMediaPeakHeap/stream", "peak-MiB"}, theirs: figure{"BenchmarkMediaPeakHeap/whole", "peak-MiB"}, lowerIsBetter: true},
	{what: "send p95 during a forged-report flood vs without: unsigned", dir: "bench", pattern: "WebhookFlood", time: "3000x",
		ours: figure{"BenchmarkWebhookFlood/unsigned", "flood-p95-µs"}, theirs: figure{"BenchmarkWebhookFlood/unsigned", "quiet-p95-µs"}, lowerIsBetter: true, target: 1.2},
	{what: "send p95 during a forged-report flood vs without: bad MAC", dir: "bench", pattern: "WebhookFlood", time: "3000x",
		ours: figure{"BenchmarkWebhookFlood/bad-signature", "flood-p95-µs"}, theirs: figure{"BenchmarkWebhookFlood/bad-signature", "quiet-p95-µs"}, lowerIsBetter: true, target: 1.2},
	{what: "send p95 during a forged-report flood vs without: 16 connections", dir: "bench", pattern: "WebhookFlood", time: "3000x",
		ours: figure{"BenchmarkWebhookFlood/16-connections", "flood-p95-µs"}, theirs: figure{"BenchmarkWebhookFlood/16-connections", "quiet-p95-µs"}, lowerIsBetter: true, target: 1.3},
	{what: "dual OTP latency, legs of 20 and 30 ms (x 30 ms)", dir: "channel/chat", pattern: "DualOTPLatency", time: "20x",
		ours: figure{"BenchmarkDualOTPLatency/DualOTP", "x30ms"}, lowerIsBetter: true, target: 1.1},
	// Each op of the mix parses all five forms of bench's indianForms; the
	// other Indian rows parse one. The baseline is the parser phone.Parse
	// replaced (legacyNormalize, in bench/phone_test.go).
	// The pumping simulator (bench/verify_test.go): the fraud guard with
	// its defaults against 10,000 pumping requests over 10 ranges mixed
	// with 10,000 legitimate ones, 75% of which enter their code.
	{what: "verify: pumping requests blocked (%)", dir: "bench", pattern: "VerifyPumping", time: "1x",
		ours: figure{"BenchmarkVerifyPumping", "pump-blocked-%"}, target: 99},
	{what: "verify: legitimate requests blocked (%)", dir: "bench", pattern: "VerifyPumping", time: "1x",
		ours: figure{"BenchmarkVerifyPumping", "legit-blocked-%"}, lowerIsBetter: true, target: 0.1},
	{what: "verify: most pumping sends to one range", dir: "bench", pattern: "VerifyPumping", time: "1x",
		ours: figure{"BenchmarkVerifyPumping", "max-sends/range"}, lowerIsBetter: true, target: 20},
	{what: "verify: attack spend vs the hourly spend cap", dir: "bench", pattern: "VerifyPumping", time: "1x",
		ours: figure{"BenchmarkVerifyPumping", "attack-spend-paise"}, theirs: figure{"BenchmarkVerifyPumping", "spend-cap-paise/h"}, lowerIsBetter: true, target: 1},
	{what: "verify: attack spend per hour, cap the only rule, vs the cap", dir: "bench", pattern: "VerifyPumping", time: "1x",
		ours: figure{"BenchmarkVerifyPumping", "cap-only-attack-spend-paise/h"}, theirs: figure{"BenchmarkVerifyPumping", "spend-cap-paise/h"}, lowerIsBetter: true, target: 1},
	{what: "verify: Check p99, memstore (µs)", dir: "bench", pattern: "VerifyCheck/memstore", time: "20000x",
		ours: figure{"BenchmarkVerifyCheck/memstore", "p99-µs"}, lowerIsBetter: true, target: 1000},
	{what: "verify: Check p99, pgstore (µs)", dir: "bench", pattern: "VerifyCheck/pgstore", time: "3000x",
		ours: figure{"BenchmarkVerifyCheck/pgstore", "p99-µs"}, lowerIsBetter: true, target: 5000},
	// The durable queue on PostgreSQL (bench/queue_test.go): pgqueue, River
	// beside pgstore, in a schema of its own; "no result" without a server.
	// The scaling curve (examples/gateway's BenchmarkScaling): sends/s of
	// 1, 2 and 4 gateway processes on one PostgreSQL, each beside the
	// database's ceiling for a durable charge at the same concurrency.
	{what: "scaling: 1 gateway process on PostgreSQL, sends/s vs the bare tx ceiling", dir: "examples/gateway", pattern: "Scaling", time: "1x",
		ours: figure{"BenchmarkScaling", "1-gateway-sends/s"}, theirs: figure{"BenchmarkScaling", "bare-tx/s"}},
	{what: "scaling: 2 gateway processes, sends/s vs the bare tx ceiling", dir: "examples/gateway", pattern: "Scaling", time: "1x",
		ours: figure{"BenchmarkScaling", "2-gateways-sends/s"}, theirs: figure{"BenchmarkScaling", "bare-tx/s"}},
	{what: "scaling: 4 gateway processes, sends/s vs the bare tx ceiling", dir: "examples/gateway", pattern: "Scaling", time: "1x",
		ours: figure{"BenchmarkScaling", "4-gateways-sends/s"}, theirs: figure{"BenchmarkScaling", "bare-tx/s"}},
	{what: "queue: 10,000 sends enqueued in one transaction, EnqueueTxMany (ms)", dir: "bench", pattern: "QueueEnqueueTx", time: "1x",
		ours: figure{"BenchmarkQueueEnqueueTx", "many-ms/batch"}, lowerIsBetter: true, target: 700},
	{what: "queue: the same with one EnqueueTx each vs 10,000 pgstore OpenTx (ms)", dir: "bench", pattern: "QueueEnqueueTx", time: "1x",
		ours: figure{"BenchmarkQueueEnqueueTx", "ms/batch"}, theirs: figure{"BenchmarkQueueEnqueueTx", "store-ms/batch"}, lowerIsBetter: true},
	{what: "queue: a bulk SMS of 1,000 queued with Enqueue vs the 1,000 in one EnqueueTxMany (ms)", dir: "bench", pattern: "QueueBulk", time: "1x",
		ours: figure{"BenchmarkQueueBulk", "bulk-ms"}, theirs: figure{"BenchmarkQueueBulk", "many-ms"}, lowerIsBetter: true},
	{what: "queue: scheduled send lateness p99 under load (ms)", dir: "bench", pattern: "QueueScheduledLateness", time: "1x",
		ours: figure{"BenchmarkQueueScheduledLateness", "p99-late-ms"}, lowerIsBetter: true, target: 1000},
	{what: "queue: queued throughput vs synchronous pipeline on PostgreSQL, vendor answering in 50 ms", dir: "bench", pattern: "QueueThroughputVendor50ms", time: "1x",
		ours: figure{"BenchmarkQueueThroughputVendor50ms", "queued-msgs/s"}, theirs: figure{"BenchmarkQueueThroughputVendor50ms", "sync-msgs/s"}, target: 1.0},
	{what: "queue: the same with an instant vendor (database round trips only)", dir: "bench", pattern: "QueueThroughput$", time: "1x",
		ours: figure{"BenchmarkQueueThroughput", "queued-msgs/s"}, theirs: figure{"BenchmarkQueueThroughput", "sync-msgs/s"}},
	{what: "phone: Parse(IN) vs old Normalize, 5-form mix (ns/op)", dir: "bench", pattern: "PhoneIndian", time: "200ms",
		ours: figure{"BenchmarkPhoneIndian/mix/parse", "ns/op"}, theirs: figure{"BenchmarkPhoneIndian/mix/legacy", "ns/op"}, lowerIsBetter: true, target: 1.1},
	{what: "phone: Parse(IN) vs old Normalize, 5-form mix (allocs/op)", dir: "bench", pattern: "PhoneIndian", time: "200ms",
		ours: figure{"BenchmarkPhoneIndian/mix/parse", "allocs/op"}, theirs: figure{"BenchmarkPhoneIndian/mix/legacy", "allocs/op"}, lowerIsBetter: true},
	{what: "phone: Parse(IN) vs old Normalize, 9876543210 (ns/op)", dir: "bench", pattern: "PhoneIndian", time: "200ms",
		ours: figure{"BenchmarkPhoneIndian/10-digit/parse", "ns/op"}, theirs: figure{"BenchmarkPhoneIndian/10-digit/legacy", "ns/op"}, lowerIsBetter: true},
	{what: "phone: Parse(IN) vs old Normalize, +919876543210 (ns/op)", dir: "bench", pattern: "PhoneIndian", time: "200ms",
		ours: figure{"BenchmarkPhoneIndian/e164/parse", "ns/op"}, theirs: figure{"BenchmarkPhoneIndian/e164/legacy", "ns/op"}, lowerIsBetter: true},
	{what: "phone: Parse(IN) vs old Normalize, +91 98765 43210 (ns/op)", dir: "bench", pattern: "PhoneIndian", time: "200ms",
		ours: figure{"BenchmarkPhoneIndian/spaced/parse", "ns/op"}, theirs: figure{"BenchmarkPhoneIndian/spaced/legacy", "ns/op"}, lowerIsBetter: true},
	{what: "phone: Parse(IN) vs old Normalize, 09876543210 (ns/op)", dir: "bench", pattern: "PhoneIndian", time: "200ms",
		ours: figure{"BenchmarkPhoneIndian/trunk-0/parse", "ns/op"}, theirs: figure{"BenchmarkPhoneIndian/trunk-0/legacy", "ns/op"}, lowerIsBetter: true},
	{what: "phone: Parse(IN) vs old Normalize, 919876543210 (ns/op)", dir: "bench", pattern: "PhoneIndian", time: "200ms",
		ours: figure{"BenchmarkPhoneIndian/91-prefix/parse", "ns/op"}, theirs: figure{"BenchmarkPhoneIndian/91-prefix/legacy", "ns/op"}, lowerIsBetter: true},
	// A foreign number's bound is absolute: 30 µs.
	{what: "phone: Parse, world.Plan, +1 415 555 0100 (ns/op)", dir: "bench", pattern: "PhoneWorld", time: "200ms",
		ours: figure{"BenchmarkPhoneWorld/US", "ns/op"}, lowerIsBetter: true, target: 30000},
	{what: "phone: Parse, world.Plan, +44 7400 123456 (ns/op)", dir: "bench", pattern: "PhoneWorld", time: "200ms",
		ours: figure{"BenchmarkPhoneWorld/GB", "ns/op"}, lowerIsBetter: true, target: 30000},
	{what: "phone: Parse, world.Plan, +49 1512 3456789 (ns/op)", dir: "bench", pattern: "PhoneWorld", time: "200ms",
		ours: figure{"BenchmarkPhoneWorld/DE", "ns/op"}, lowerIsBetter: true, target: 30000},
}

func main() {
	count := flag.Int("count", 6, "runs of each benchmark; the table shows medians")
	root := flag.String("root", "..", "the repository root")
	only := flag.String("only", "", "run only comparisons whose description contains this")
	flag.Parse()

	fmt.Printf("notify benchmarks, %s, medians of %d runs\n", time.Now().UTC().Format("2006-01-02"), *count)
	fmt.Printf("machine: %s, %d cores, %s %s/%s\n\n", cpuModel(), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)

	results := map[string]map[string][]float64{} // run key -> "bench|unit" -> values
	failed := false
	fmt.Printf("| %-58s | %14s | %14s | %7s | %8s | %-4s |\n", "comparison", "ours", "baseline", "ratio", "target", "met")
	fmt.Printf("|%s|%s|%s|%s|%s|%s|\n", strings.Repeat("-", 60), strings.Repeat("-", 16), strings.Repeat("-", 16), strings.Repeat("-", 9), strings.Repeat("-", 10), strings.Repeat("-", 6))
	for _, c := range comparisons {
		if *only != "" && !strings.Contains(c.what, *only) {
			continue
		}
		key := c.dir + "|" + c.pattern + "|" + c.time
		if results[key] == nil {
			out, err := runBench(*root, c, *count)
			if err != nil {
				fmt.Fprintf(os.Stderr, "benchtable: %s: %v\n%s\n", c.dir, err, out)
				failed = true
				results[key] = map[string][]float64{}
			} else {
				results[key] = parse(bytes.NewReader(out))
			}
		}
		row(c, results[key])
	}
	if failed {
		os.Exit(1)
	}
}

func runBench(root string, c comparison, count int) ([]byte, error) {
	args := []string{"test", "-run", "^$", "-bench", c.pattern, "-benchmem", "-benchtime", c.time, "-count", strconv.Itoa(count), "./" + c.dir}
	dir := root
	if c.dir == "bench" { // its own module
		dir, args[len(args)-1] = root+"/bench", "."
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), c.env...)
	return cmd.CombinedOutput()
}

// parse reads benchmark lines: name-P  N  v1 unit1  v2 unit2 ...
func parse(r io.Reader) map[string][]float64 {
	res := map[string][]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				res[name+"|"+f[i+1]] = append(res[name+"|"+f[i+1]], v)
			}
		}
	}
	return res
}

func median(vs []float64) (float64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2], true
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
}

func row(c comparison, res map[string][]float64) {
	ours, ok := median(res[c.ours.bench+"|"+c.ours.unit])
	if !ok {
		fmt.Printf("| %-58s | %14s | %14s | %7s | %8s | %-4s |\n", c.what, "no result", "", "", "", "?")
		return
	}
	if c.theirs.bench == "" && c.target == 0 {
		fmt.Printf("| %-58s | %14s | %14s | %7s | %8s | %-4s |\n", c.what, num(ours), "-", "-", "-", "-")
		return
	}
	if c.theirs.bench == "" {
		met := ours <= c.target
		cmp := "<="
		if !c.lowerIsBetter {
			met, cmp = ours >= c.target, ">="
		}
		fmt.Printf("| %-58s | %14s | %14s | %7s | %8s | %-4s |\n", c.what, num(ours), "-", "-", cmp+num(c.target), yes(met))
		return
	}
	theirs, ok := median(res[c.theirs.bench+"|"+c.theirs.unit])
	if !ok || theirs == 0 {
		fmt.Printf("| %-58s | %14s | %14s | %7s | %8s | %-4s |\n", c.what, num(ours), "no result", "", "", "?")
		return
	}
	ratio := ours / theirs
	if c.target == 0 {
		fmt.Printf("| %-58s | %14s | %14s | %7.2f | %8s | %-4s |\n", c.what, num(ours), num(theirs), ratio, "-", "-")
		return
	}
	met, cmp := ratio <= c.target, "<="
	if !c.lowerIsBetter {
		met, cmp = ratio >= c.target, ">="
	}
	fmt.Printf("| %-58s | %14s | %14s | %7.2f | %8s | %-4s |\n", c.what, num(ours), num(theirs), ratio, cmp+num(c.target), yes(met))
}

func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
		}
	}
	return runtime.GOARCH
}
