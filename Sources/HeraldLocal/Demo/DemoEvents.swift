import Foundation
import HeraldDomain
import HeraldApp
/// The events the demo publishes: localized breaking news per category, a tag expression,
/// a notify-user event and an actionable invitation.
enum DemoEvents {
    struct Headline: Sendable {
        var category: String
        var english: String
        var french: String
        var mandarin: String
    }

    static let headlines: [Headline] = [
        Headline(
            category: "World", english: "Summit ends with climate accord",
            french: "Le sommet se termine par un accord sur le climat", mandarin: "峰会以气候协议结束"),
        Headline(
            category: "Politics", english: "Parliament passes budget",
            french: "Le Parlement adopte le budget", mandarin: "议会通过预算"),
        Headline(
            category: "Business", english: "Markets rally at the open",
            french: "Les marchés progressent à l'ouverture", mandarin: "股市开盘上涨"),
        Headline(
            category: "Technology", english: "New chip doubles battery life",
            french: "Une nouvelle puce double l'autonomie", mandarin: "新芯片使电池续航翻倍"),
        Headline(
            category: "Science", english: "Probe reaches Jupiter's moon",
            french: "La sonde atteint la lune de Jupiter", mandarin: "探测器抵达木星卫星"),
        Headline(
            category: "Sports", english: "Underdogs win the final",
            french: "Les outsiders remportent la finale", mandarin: "黑马赢得决赛"),
    ]

    static func event(id: String, tags: String, english: String, french: String, mandarin: String) -> [String: Any] {
        [
            "id": id,
            "tags": tags,
            "priority": "high",
            "properties": ["News_English": english, "News_French": french, "News_Mandarin": mandarin],
            "native": ["apns": ["aps": ["alert": english, "category": "NEWS_CATEGORY"]]],
        ]
    }

    static func all(runId: String) -> [(title: String, body: [String: Any])] {
        var events: [(String, [String: Any])] = headlines.map { headline in
            (
                "Breaking news for \(headline.category)",
                event(
                    id: "bn-\(runId)-\(headline.category.lowercased())", tags: headline.category,
                    english: headline.english, french: headline.french, mandarin: headline.mandarin)
            )
        }
        events.append(
            (
                "(World || Politics) && !Sports",
                event(
                    id: "bn-\(runId)-expression", tags: "(World || Politics) && !Sports",
                    english: "Election results: live coverage", french: "Résultats des élections : en direct",
                    mandarin: "选举结果：现场报道")
            ))
        events.append(
            (
                "Notify user alice",
                event(
                    id: "bn-\(runId)-alice", tags: "$UserId:{alice}",
                    english: "Alice, a story you follow was updated", french: "Alice, un article que vous suivez a été mis à jour",
                    mandarin: "Alice，您关注的报道已更新")
            ))
        events.append(
            (
                "Invitation with INVITE_CATEGORY",
                [
                    "id": "bn-\(runId)-invitation", "tags": "Invitations", "priority": "normal",
                    "properties": ["Invitation_English": "Newsroom dinner on Friday? Accept or decline"],
                ]
            ))
        events.append(
            (
                "Live Activity of the final: a goal",
                [
                    "id": "bn-\(runId)-final", "tags": "Match_Final", "priority": "high",
                    "liveActivity": [
                        "event": "update", "contentState": ["home": 2, "away": 1, "minute": 89],
                        "alert": ["title": "Goal!", "body": "2-1 in the 89th minute"],
                    ],
                ]
            ))
        return events
    }
}
