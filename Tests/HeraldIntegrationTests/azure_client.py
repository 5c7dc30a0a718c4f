"""Drives Herald's Azure Notification Hubs routes with azure-notification-hub-unofficial, a
client none of us wrote (a port of Microsoft's Node SDK), used unmodified: only its connection
string points at Herald. AzureClientTests runs it and checks what it prints (one JSON object)
against the pipeline's records.

usage: azure_client.py <connection string> <hub> <scenario> [notification id]
scenarios:
  devices   installations: create (APNs template, FCM v1 native), read, patch, and one deleted
  send      a template send and a native APNs send to tag expressions
  testsend  the same two as test sends, with the outcome of each device they reached
  outcome   the outcome details of a notification
  schedule  a scheduled send
  cancel    the cancel of a scheduled send
  denied    one installation read, expected to be refused (another hub's key)
  registrations
            Atom registrations: an APNs template and an FCM v1 native one created as Azure's
            SDKs write them (this client has no create: its own signing, its own HTTP client),
            then listed, read and one deleted by the client, and a template send to the first
"""

import json
import sys
import time
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone

import httpx

from azure_notification_hub import (
    AzureNHError,
    NotificationHubsClient,
    create_apple_notification,
    create_template_notification,
)

NS = {"sb": "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"}
APNS_TOKEN = "ab" * 32
FCM_TOKEN = "fcm-azure-client:APA91b" + "Q7x" * 40


def devices(client, hub):
    template = {"body": '{"aps":{"alert":"$(headline)"}}', "headers": {"apns-push-type": "alert"}, "tags": ["Alerts"]}
    client.create_or_update_installation(
        {"installationId": f"{hub}-iphone", "platform": "apns", "pushChannel": APNS_TOKEN, "tags": ["World"],
         "templates": {"news": template}})
    client.create_or_update_installation(
        {"installationId": f"{hub}-pixel", "platform": "fcmv1", "pushChannel": FCM_TOKEN, "tags": ["World", "Sports"]})
    client.create_or_update_installation(
        {"installationId": f"{hub}-ipad", "platform": "apns", "pushChannel": APNS_TOKEN, "tags": ["World"]})
    client.create_or_update_installation(
        {"installationId": f"{hub}-gone", "platform": "apns", "pushChannel": APNS_TOKEN, "tags": ["World"]})
    client.delete_installation(f"{hub}-gone")
    client.update_installation(f"{hub}-pixel", [{"op": "add", "path": "/tags", "value": "Breaking"}])
    iphone = client.get_installation(f"{hub}-iphone")
    pixel = client.get_installation(f"{hub}-pixel")
    try:
        client.get_installation(f"{hub}-gone")
        gone = 200
    except AzureNHError as error:
        gone = error.status_code
    return {"iphone": iphone, "pixel": pixel, "gone": gone}


def outcome(client, notification_id):
    """The outcome details of a notification, read once (the test waits for its receipts first)."""
    try:
        raw = client.get_notification_outcome_details(notification_id)["_raw_xml"]
    except AzureNHError as error:
        return {"status": error.status_code}
    root = ET.fromstring(raw)
    counts = {}
    for group in root:
        name = group.tag.split("}")[-1]
        if name.endswith("OutcomeCounts"):
            counts[name] = {o.findtext("sb:Name", namespaces=NS): int(o.findtext("sb:Count", namespaces=NS)) for o in group}
    return {"state": root.findtext("sb:State", namespaces=NS), "counts": counts, "id": root.findtext("sb:NotificationId", namespaces=NS)}


def send(client, hub):
    template = client.send_notification(
        create_template_notification({"headline": f"Final whistle ({hub})"}), tag_expression="World && Alerts")
    native = client.send_notification(
        create_apple_notification({"aps": {"alert": f"Native ({hub})"}}, headers={"apns-priority": "10"}),
        tag_expression="World || Nowhere")
    return {"template": template, "native": native}


def testsend(client, hub):
    answers = {}
    for name, notification, tags in [
        ("template", create_template_notification({"headline": f"Test ({hub})"}), "World && Alerts"),
        ("native", create_apple_notification({"aps": {"alert": f"Test native ({hub})"}}), "World || Nowhere"),
    ]:
        root = ET.fromstring(client.send_notification(notification, tag_expression=tags, test_send=True)["_raw_xml"])
        answers[name] = {
            "success": int(root.findtext("sb:Success", namespaces=NS)),
            "failure": int(root.findtext("sb:Failure", namespaces=NS)),
            "results": [
                {field: result.findtext(f"sb:{field}", namespaces=NS)
                 for field in ("ApplicationPlatform", "PnsHandle", "RegistrationId", "Outcome")}
                for result in root.findall("sb:Results/sb:RegistrationResult", NS)
            ],
        }
    return answers


def schedule(client, hub):
    when = datetime.now(timezone.utc) + timedelta(hours=1)
    return client.schedule_notification(when, create_template_notification({"headline": "later"}), tag_expression="World")


def cancel(client, notification_id):
    try:
        client.cancel_scheduled_notification(notification_id)
        return {"status": 200}
    except AzureNHError as error:
        return {"status": error.status_code, "body": error.body}


ATOM = "http://www.w3.org/2005/Atom"
DESCRIPTION = ('xmlns:i="http://www.w3.org/2001/XMLSchema-instance" '
               'xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"')


def create_registration(client, description):
    """POST /registrations with an Atom entry, signed as the client signs; the new id."""
    body = (f'<?xml version="1.0" encoding="utf-8"?><entry xmlns="{ATOM}"><content type="application/xml">'
            f"{description}</content></entry>")
    headers = client._create_headers({"Content-Type": "application/atom+xml;type=entry;charset=utf-8"})
    reply = client._client.post(client._request_url("/registrations"), content=body, headers=headers)
    if reply.status_code != 200:
        raise AzureNHError(reply.status_code, reply.text)
    return ET.fromstring(reply.text).findtext(f"{{{ATOM}}}title")


def registrations(client, hub):
    apple = create_registration(client, (
        f"<AppleTemplateRegistrationDescription {DESCRIPTION}><Tags>World, Registered</Tags>"
        f"<DeviceToken>{APNS_TOKEN.upper()}</DeviceToken>"
        '<BodyTemplate><![CDATA[{"aps":{"alert":"$(headline)"}}]]></BodyTemplate><TemplateName>azure</TemplateName>'
        "</AppleTemplateRegistrationDescription>"))
    pixel = create_registration(client, (
        f"<FcmV1RegistrationDescription {DESCRIPTION}><Tags>World</Tags>"
        f"<FcmV1RegistrationId>{FCM_TOKEN}</FcmV1RegistrationId></FcmV1RegistrationDescription>"))
    listed = [entry.get("RegistrationId") for entry in client.list_registrations(top=100)]
    read = client.get_registration(apple)
    client.delete_registration(pixel)
    try:
        client.get_registration(pixel)
        gone = 200
    except AzureNHError as error:
        gone = error.status_code
    sent = client.send_notification(create_template_notification({"headline": f"Registered ({hub})"}), tag_expression="Registered")
    return {"apple": apple, "pixel": pixel, "listed": listed, "read": read, "gone": gone, "send": sent}


def denied(client, hub):
    try:
        client.get_installation(f"{hub}-iphone")
        return {"status": 200}
    except AzureNHError as error:
        return {"status": error.status_code, "body": error.body}


if __name__ == "__main__":
    connection, hub, scenario = sys.argv[1:4]
    with NotificationHubsClient(connection, hub) as client:
        # The client gives up on an answer after 30 s; a test send's answer waits for its
        # receipts, which on a loaded machine can take longer. Herald bounds that wait itself.
        client._client.timeout = httpx.Timeout(None)
        if scenario in ("outcome", "cancel"):
            result = {"outcome": outcome, "cancel": cancel}[scenario](client, sys.argv[4])
        else:
            result = {"devices": devices, "send": send, "testsend": testsend, "schedule": schedule, "denied": denied,
                      "registrations": registrations}[scenario](
                client, hub)
    print(json.dumps(result))
