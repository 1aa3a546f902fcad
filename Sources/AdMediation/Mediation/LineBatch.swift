import AdPrivacy
import Synchronization
import Tracing

extension Mediator {
    /// One line's load as the driver admitted it: the slot and where it goes. Its request is built when the load
    /// begins (``LineBatch``), from the request's ``LineContext``.
    struct Line: Sendable {
        let slot: Int
        let route: PlacementPlan.Route
        /// The privacy rules' verdict for the request's signals (nil when it carries none: the route's own).
        let verdict: PrivacyVerdict?
        /// The nesting depth to run the load at, when it is not the caller's.
        let depth: Int?
    }
}

// `@unchecked Sendable` is safe: every stored property is an immutable Sendable value but `answers`, whose cells are
// handed between a batch's task and the driver by the batch's atomic progress word (``LineBatch``): the task writes
// a cell before the releasing exchange that publishes it, the driver reads it only after its acquiring read saw it
// published, and once published the task never touches it again (a cell the driver did not see published is the
// task's alone). One cell per slot, and a slot is started at most once per request, so no two loads share a cell.
/// What every line of one request shares, made once per request, and per slot a cell where a load that answers
/// while its task still has the caller's thread leaves its answer for the driver (no lock, no inbox).
final class LineContext: @unchecked Sendable {
    let mediator: Mediator
    /// The caller's request, as every line sends it before the line's own fields are set.
    let request: AdRequest
    let format: AdFormat
    let tracer: (any Tracer)?
    let inbox = Inbox()
    let slots: [DecisionEngine.Slot]
    let bidderCount: Int
    let auction: AuctionType
    /// The request's deadline: no load is given more time than is left until it.
    let deadline: AdInstant
    private let answers: UnsafeMutablePointer<Result<AdLoadResult, AdError>?>

    init(
        mediator: Mediator, request: AdRequest, lossNotices: LossNoticeContent, format: AdFormat,
        tracer: (any Tracer)?, engine: borrowing DecisionEngine
    ) {
        self.mediator = mediator
        var request = request
        request.lossNotices = lossNotices
        self.request = request
        self.format = format
        self.tracer = tracer
        slots = engine.slots
        bidderCount = engine.bidderCount
        auction = engine.auction
        deadline = engine.deadline
        answers = .allocate(capacity: engine.slots.count)
        answers.initialize(repeating: nil, count: engine.slots.count)
    }

    deinit {
        answers.deinitialize(count: slots.count)
        answers.deallocate()
    }

    /// Leaves slot `slot`'s answer in its cell (the batch's task, before publishing it).
    fileprivate func keep(_ result: Result<AdLoadResult, AdError>, of slot: Int) { answers[slot] = result }

    /// Takes slot `slot`'s answer out of its cell: the driver once it saw it published, or the batch's task when the
    /// driver took the lines back first (it then never reads the cell).
    func takeAnswer(of slot: Int) -> Result<AdLoadResult, AdError>? { answers[slot].take() }

    /// Makes `request` line `line`'s: the caller's request, restricted to what the privacy rules allow the network,
    /// for the slot's placement and floor, with the slot's time left. `restriction` is what `request` is restricted
    /// to so far (nil: the caller's request as it is): a batch's lines update one request, which is rebuilt from the
    /// caller's only when a line's permissions differ from the line's before.
    func update(
        _ request: inout AdRequest, restricted restriction: inout PrivacyPermissions?, for line: Mediator.Line,
        at now: AdInstant
    ) {
        let verdict = line.verdict ?? line.route.unsignalledVerdict
        if restriction != verdict.permissions {
            if restriction != nil { request = self.request }
            PrivacyConfiguration.restrict(&request, to: verdict)
            restriction = verdict.permissions
        }
        let slot = line.slot
        request.placement = slots[slot].placement
        request.format = format
        request.timeout = min(slots[slot].timeout, deadline - now)
        request.floorEcpm = slots[slot].floor
        // Bidders hear how the placement clears; a waterfall line takes part in no auction of this mediator's.
        request.auction = slot < bidderCount ? auction : nil
    }
}

/// The lines one step of a request starts, run by one task: one after another while each answers without suspending
/// (the task is immediate, so they run on the caller's thread and cost one task between them). A load that answers
/// while the task still has the caller's thread leaves its answer in its slot's cell (``LineContext``). When a load
/// suspends, the caller gets its thread back and takes back the lines not begun (``takeBack(into:)``), with the
/// answers left so far; the task then finishes only the load it is in and posts that answer to the request's inbox,
/// so every load still running has a task of its own, which cancelling cancels.
///
/// A load that answers once the request was decided (the inbox closed) handles its answer as late
/// (``Mediator/lateAnswer(_:slot:network:placement:cancelledAt:)``).
final class LineBatch: Sendable {
    private let lines: [Mediator.Line]
    private let context: LineContext
    /// The task's progress in one word, so that beginning a line costs no lock: the position of the next line to
    /// begin, shifted left by 2; bit 1 set while the task is in a load whose answer is not left in its cell; bit 0 set
    /// once the caller took the lines not begun back.
    private let progress: Atomic<Int>
    private static let inLoad = 2
    private static let takenBack = 1

    /// The instant the first line begins at, when the caller knows it (else the clock is read).
    private let begins: AdInstant?

    /// A batch of `lines`, the first beginning at `begins` if given; `alone`: a task of its own for its one line,
    /// never taken back (its answer goes to the inbox).
    init(_ lines: [Mediator.Line], _ context: LineContext, at begins: AdInstant? = nil, alone: Bool = false) {
        self.lines = lines
        self.context = context
        self.begins = begins
        progress = Atomic(alone ? 1 << 2 | Self.inLoad | Self.takenBack : 0)
    }

    /// Runs the lines, one after another, until none is left or the caller took the rest back.
    func run() async {
        let (context, tracer) = (context, context.tracer)
        var position = progress.load(ordering: .relaxed) & Self.takenBack != 0 ? 0 : begin()
        var begins = begins
        // One request for the batch's lines, copied once from the caller's and updated per line.
        var request = context.request
        var restriction: PrivacyPermissions?
        while let current = position {
            let line = lines[current]
            // Read per line after the first: a line begun just before may have run for a while.
            context.update(&request, restricted: &restriction, for: line, at: begins ?? context.mediator.clock.now)
            begins = nil
            let network = line.route.network
            let result: Result<AdLoadResult, AdError>
            if let depth = line.depth {
                result = await MediationNesting.$depth.withValue(depth) {
                    await Mediator.tracedLoad(request, from: network, tracer: tracer)
                }
            } else {
                result = await Mediator.tracedLoad(request, from: network, tracer: tracer)
            }
            position = answered(line, result, placement: request.placement)
        }
    }

    /// The first line to run, or nil when the caller took them back before the task began.
    private func begin() -> Int? {
        var state = 0
        while true {
            guard state & Self.takenBack == 0, lines.count > 0 else { return nil }
            let (exchanged, original) = progress.compareExchange(
                expected: state, desired: 1 << 2 | Self.inLoad, ordering: .acquiringAndReleasing)
            if exchanged { return 0 }
            state = original
        }
    }

    /// The load of `line` answered: while the caller has not taken the lines back, its answer is left in its cell and
    /// published, and the next line begins (its position returned); otherwise the answer goes to the inbox and the
    /// task ends.
    private func answered(
        _ line: Mediator.Line, _ result: Result<AdLoadResult, AdError>, placement: String
    ) -> Int? {
        var state = progress.load(ordering: .relaxed)
        if state & Self.takenBack == 0 {
            context.keep(result, of: line.slot)
            while state & Self.takenBack == 0 {
                let next = state >> 2
                let desired = next < lines.count ? (next + 1) << 2 | Self.inLoad : next << 2
                let (exchanged, original) = progress.compareExchange(
                    expected: state, desired: desired, ordering: .acquiringAndReleasing)
                if exchanged { return next < lines.count ? next : nil }
                state = original
            }
            // Taken back meanwhile: the caller saw this load running and never reads its cell.
            _ = context.takeAnswer(of: line.slot)
        }
        let mediator = context.mediator
        if let decidedAt = context.inbox.send(.answer(line.slot, result)) {
            mediator.lateAnswer(
                result, slot: line.slot, network: line.route.network.id, placement: placement, cancelledAt: decidedAt)
        }
        return nil
    }

    /// The caller's side, once the task has given its thread back: the lines not begun (the task will begin none of
    /// them), the answers left in their cells (in order), and the slot of the load the task is in, if it is in one.
    func takeBack(into answers: inout [Mediator.ReadyAnswer]) -> (rest: [Mediator.Line], current: Int?, begun: Int) {
        let state = progress.bitwiseOr(Self.takenBack, ordering: .acquiringAndReleasing).oldValue
        let begun = state >> 2
        let current = state & Self.inLoad != 0 ? lines[begun - 1].slot : nil
        for line in lines[..<begun] where line.slot != current {
            if let result = context.takeAnswer(of: line.slot) {
                answers.append(Mediator.ReadyAnswer(slot: line.slot, result: result, at: .zero))
            }
        }
        return (begun < lines.count ? Array(lines[begun...]) : [], current, begun)
    }
}
